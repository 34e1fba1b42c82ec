# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Organisations: the tenants everything else belongs to."""

from __future__ import annotations

from typing import Any

from memora_ogm import convert
from memora_ogm._sync.component import GraphComponent
from memora_ogm._sync.graph import Landed, VectorChanges, nothing
from memora_ogm._sync.memory import gone, removed_memories
from memora_ogm._sync.nodes import (
    Agent,
    Date,
    Interaction,
    InteractionCollection,
    Memory,
    MemoryCollection,
    MessageBlock,
    Org,
    User,
)
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.schema import models
from memora_ogm.unit_of_work import Prepared, Ref, UnitOfWork
from memora_ogm.validation import check_ids, check_name

#: Nodes of each class deleted per transaction when an organisation is deleted.
DELETE_BATCH_SIZE = 2_000
#: Interactions per transaction: each goes with its whole message chain.
INTERACTION_BATCH_SIZE = DELETE_BATCH_SIZE // 50


def match_org(work: UnitOfWork, org_id: str, lock: bool = False) -> Ref:
    """Declare the organisation ``OrganizationNotFound`` requires."""
    return work.match(Org, lambda: OrganizationNotFound(org_id), lock=lock, org_id=org_id)


def _delete_batch(org_id: str) -> UnitOfWork:
    """One transaction of an organisation's deletion, one statement.

    It locks the organisation (as ``create_user`` and ``create_agent`` do), then the
    users' collections, which every save and update links to, and the interactions,
    which every update locks: writes under way finish first and the reads that follow
    see what they wrote; later ones find their nodes gone. Then it deletes up to a batch
    of each class of node under the organisation, and the organisation itself once
    every class had room to spare (nothing is left under it).
    """
    work = UnitOfWork()
    org = match_org(work, org_id, lock=True)
    groups: list[tuple[Ref, int]] = []
    for cls in (InteractionCollection, MemoryCollection):
        collections = work.nodes(cls, limit=DELETE_BATCH_SIZE, org_id=org_id)
        work.lock(collections)
        groups.append((collections, DELETE_BATCH_SIZE))
    interactions = work.nodes(Interaction, limit=INTERACTION_BATCH_SIZE, org_id=org_id)
    work.lock(interactions)
    groups.append((interactions, INTERACTION_BATCH_SIZE))
    memories = work.nodes(Memory, limit=DELETE_BATCH_SIZE, org_id=org_id)
    groups.append((memories, DELETE_BATCH_SIZE))
    groups += [
        (work.nodes(cls, limit=DELETE_BATCH_SIZE, org_id=org_id), DELETE_BATCH_SIZE)
        for cls in (User, Date, Agent)
    ]
    messages = work.reachable(interactions, Interaction.first_message, MessageBlock.is_next)
    work.output("memories", memories)
    for group, _ in groups:
        work.delete(group)
    work.delete(messages)
    work.delete_when_room(org, groups, "org_deleted")
    return work


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
ORGANIZATION = Prepared(lambda work, org_id: work.output("org", match_org(work, org_id)))
ORGANIZATIONS = Prepared(lambda work: work.output("orgs", work.nodes(Org)))


class Neo4jOrganization(GraphComponent):
    def create_organization(self, org_name: str) -> models.Organization:
        check_name("org_name", org_name, error=TypeError)
        work = UnitOfWork()
        _, props = work.create(Org, org_name=org_name)

        landed = Landed(Org, {"org_id": props["org_id"]})
        self.graph.write_unit(work, nothing, landed=landed)
        self.logger.info("created organization %s", props["org_id"])
        return convert.organization(props)

    def get_organization(self, org_id: str) -> models.Organization:
        check_ids(TypeError, org_id=org_id)
        work = ORGANIZATION.bind(org_id=org_id)
        return self.graph.read_unit(work, lambda row: convert.organization(row["org"]))

    def get_all_organizations(self) -> list[models.Organization]:
        return self.graph.read_unit(
            ORGANIZATIONS.bind(), lambda row: [convert.organization(org) for org in row["orgs"]]
        )

    def update_organization(self, org_id: str, new_org_name: str) -> models.Organization:
        check_ids(org_id=org_id)
        check_name("new_org_name", new_org_name)
        work = UnitOfWork()
        org = match_org(work, org_id)
        work.set(org, org_name=new_org_name)
        work.output("org", org)

        return self.graph.write_unit(work, lambda row: convert.organization(row["org"]))

    def delete_organization(self, org_id: str) -> None:
        """Delete the organisation and everything under it, a batch per transaction.

        Each batch is one statement (:func:`_delete_batch`); an organisation smaller
        than a batch goes in one. Memories leave the vector store with the batch that
        deletes them, so the two stores agree after every commit. A deletion that
        stopped half-way can simply be called again, and nothing created meanwhile is
        left behind.
        """
        check_ids(TypeError, org_id=org_id)
        work = _delete_batch(org_id)

        def batch(changes: VectorChanges) -> dict[str, Any]:
            row = self.graph.run(work)
            changes.remove(removed_memories(row))
            if row["org_deleted"]:
                changes.purge_organization(org_id)
            return row

        def landed(row: dict[str, Any]) -> Landed | None:
            """The last batch deleted the organisation; any other, its memories."""
            if row["org_deleted"]:
                return Landed(Org, {"org_id": org_id}, present=False)
            return gone(row["memories"])

        while not (self.graph.write(batch, landed))["org_deleted"]:
            pass
        self.logger.info("deleted organization %s", org_id)
