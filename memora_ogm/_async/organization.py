"""Organisations: the tenants everything else belongs to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from memora_ogm import convert
from memora_ogm._async.component import GraphComponent, get_org, locked_org
from memora_ogm._async.graph import VectorChanges
from memora_ogm._async.nodes import (
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
from memora_ogm._async.ogm import delete_nodes, reachable, take
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_name

#: Nodes deleted per transaction when an organisation is deleted.
DELETE_BATCH_SIZE = 2_000


class Neo4jOrganization(GraphComponent):
    async def create_organization(self, org_name: str) -> models.Organization:
        check_name("org_name", org_name, error=TypeError)

        async def work(_: VectorChanges) -> models.Organization:
            return convert.organization(await Org(org_name=org_name).save())

        org = await self.graph.write(work)
        self.logger.info("created organization %s", org.org_id)
        return org

    async def get_organization(self, org_id: str) -> models.Organization:
        check_ids(TypeError, org_id=org_id)

        async def work() -> models.Organization:
            return convert.organization(await get_org(org_id))

        return await self.graph.read(work)

    async def get_all_organizations(self) -> list[models.Organization]:
        async def work() -> list[models.Organization]:
            return [convert.organization(node) for node in await Org.nodes.all()]

        return await self.graph.read(work)

    async def update_organization(self, org_id: str, new_org_name: str) -> models.Organization:
        check_ids(org_id=org_id)
        check_name("new_org_name", new_org_name)

        async def work(_: VectorChanges) -> models.Organization:
            org = await get_org(org_id)
            org.org_name = new_org_name
            return convert.organization(await org.save())

        return await self.graph.write(work)

    async def delete_organization(self, org_id: str) -> None:
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
        await self.graph.read(lambda: get_org(org_id))
        batches: list[Callable[[VectorChanges], Awaitable[int]]] = [
            partial(_delete_batch, User, org_id),
            partial(_delete_memory_batch, org_id),
            partial(_delete_interaction_batch, org_id),
            *(
                partial(_delete_batch, cls, org_id)
                for cls in (Date, InteractionCollection, MemoryCollection, Agent)
            ),
        ]

        async def delete_org(changes: VectorChanges) -> bool:
            org = await locked_org(org_id)
            for cls in (User, Agent, Memory, Interaction, Date):
                if await take(cls.nodes.filter(org_id=org_id), 1):
                    return False
            await delete_nodes([org])
            changes.purge_organization(org_id)
            return True

        while True:
            for delete_batch in batches:
                while await self.graph.write(delete_batch):
                    pass
            if await self.graph.write(delete_org):
                break
        self.logger.info("deleted organization %s", org_id)


async def _delete_memory_batch(org_id: str, changes: VectorChanges) -> int:
    memories = await take(Memory.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE)
    changes.remove(convert.memory_for_vector(node) for node in memories)
    await delete_nodes(memories)
    return len(memories)


async def _delete_interaction_batch(org_id: str, _: VectorChanges) -> int:
    # An interaction goes with its whole message chain; bound the batch by interactions.
    interactions = await take(Interaction.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE // 50)
    messages = reachable(interactions, Interaction.first_message, MessageBlock.is_next)
    await delete_nodes([message for _, message in await messages] + interactions)
    return len(interactions)


async def _delete_batch(cls: type[MemoraNode], org_id: str, _: VectorChanges) -> int:
    nodes = await take(cls.nodes.filter(org_id=org_id), DELETE_BATCH_SIZE)
    await delete_nodes(nodes)
    return len(nodes)
