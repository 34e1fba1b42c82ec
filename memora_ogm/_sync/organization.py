# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Organisations: the tenants everything else belongs to."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from memora_ogm import convert
from memora_ogm._sync.component import GraphComponent, get_org, locked_org
from memora_ogm._sync.graph import VectorChanges
from memora_ogm._sync.nodes import (
    Agent,
    Date,
    Interaction,
    InteractionCollection,
    MemoraNode,
    Memory,
    MemoryCollection,
    MessageBlock,
    Org,
    User,
)
from memora_ogm._sync.ogm import delete_nodes, reachable, take
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_name

#: Nodes deleted per transaction when an organisation is deleted.
DELETE_BATCH_SIZE = 2_000


class Neo4jOrganization(GraphComponent):
    def create_organization(self, org_name: str) -> models.Organization:
        check_name("org_name", org_name, error=TypeError)

        def work(_: VectorChanges) -> models.Organization:
            return convert.organization(Org(org_name=org_name).save())

        org = self.graph.write(work)
        self.logger.info("created organization %s", org.org_id)
        return org

    def get_organization(self, org_id: str) -> models.Organization:
        check_ids(TypeError, org_id=org_id)

        def work() -> models.Organization:
            return convert.organization(get_org(org_id))

        return self.graph.read(work)

    def get_all_organizations(self) -> list[models.Organization]:
        def work() -> list[models.Organization]:
            return [convert.organization(node) for node in Org.nodes.all()]

        return self.graph.read(work)

    def update_organization(self, org_id: str, new_org_name: str) -> models.Organization:
        check_ids(org_id=org_id)
        check_name("new_org_name", new_org_name)

        def work(_: VectorChanges) -> models.Organization:
            org = get_org(org_id)
            org.org_name = new_org_name
            return convert.organization(org.save())

        return self.graph.write(work)

    def delete_organization(self, org_id: str) -> None:
        """Delete the organisation and everything under it, a batch per transaction.

        Users go first: a write of a user that is under way finishes before its user
        goes, and later ones find no user. Memories leave the vector store with the
        batch that deletes them, so the two stores agree after every commit. The
        organisation node goes last, in a transaction that locks it (as
        ``create_user`` and ``create_agent`` do) and finds nothing left under it, else
        the batches run again; so a deletion that stopped half-way can simply be
        called again, and nothing created meanwhile is left behind.
        """
        check_ids(TypeError, org_id=org_id)
        self.graph.read(lambda: get_org(org_id))
        batches: list[Callable[[VectorChanges], int]] = [
            partial(_delete_batch, User, org_id),
            partial(_delete_memory_batch, org_id),
            partial(_delete_interaction_batch, org_id),
            *(
                partial(_delete_batch, cls, org_id)
                for cls in (Date, InteractionCollection, MemoryCollection, Agent)
            ),
        ]

        def delete_org(changes: VectorChanges) -> bool:
            org = locked_org(org_id)
            for cls in (User, Agent, Memory, Interaction, Date):
                if take(cls.nodes.filter(org_id=org_id), 1):
                    return False
            delete_nodes([org])
            changes.purge_organization(org_id)
            return True

        while True:
            for delete_batch in batches:
                while self.graph.write(delete_batch):
                    pass
            if self.graph.write(delete_org):
                break
        self.logger.info("deleted organization %s", org_id)


def _delete_memory_batch(org_id: str, changes: VectorChanges) -> int:
    memories = take(Memory.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE)
    changes.remove(convert.memory_for_vector(node) for node in memories)
    delete_nodes(memories)
    return len(memories)


def _delete_interaction_batch(org_id: str, _: VectorChanges) -> int:
    # An interaction goes with its whole message chain; bound the batch by interactions.
    interactions = take(Interaction.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE // 50)
    messages = reachable(interactions, Interaction.first_message, MessageBlock.is_next)
    delete_nodes([message for _, message in messages] + interactions)
    return len(interactions)


def _delete_batch(cls: type[MemoraNode], org_id: str, _: VectorChanges) -> int:
    nodes = take(cls.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE)
    delete_nodes(nodes)
    return len(nodes)
