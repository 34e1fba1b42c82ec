"""Agents: of an organisation, and optionally of one of its users."""

from __future__ import annotations

from memora_ogm import convert
from memora_ogm._async.component import GraphComponent, get_agent, get_org, get_user, locked_org
from memora_ogm._async.graph import VectorChanges
from memora_ogm._async.nodes import Agent, Org, User
from memora_ogm._async.ogm import connect_many, delete_nodes, reachable
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_name


class Neo4jAgent(GraphComponent):
    async def create_agent(
        self, org_id: str, agent_label: str, user_id: str | None = None
    ) -> models.Agent:
        check_ids(org_id=org_id)
        check_name("agent_label", agent_label)
        if user_id is not None:
            check_ids(user_id=user_id)

        async def work(_: VectorChanges) -> models.Agent:
            org = await locked_org(org_id)
            user = await get_user(org_id, user_id) if user_id is not None else None
            agent = await Agent(org_id=org_id, agent_label=agent_label, user_id=user_id).save()
            await connect_many(
                (Org.has_agent, [(org, agent)]),
                (User.has_agent, [(user, agent)] if user is not None else []),
            )
            return convert.agent(agent)

        agent = await self.graph.write(work)
        self.logger.info("created agent %s", agent.agent_id)
        return agent

    async def get_agent(self, org_id: str, agent_id: str) -> models.Agent:
        check_ids(org_id=org_id, agent_id=agent_id)

        async def work() -> models.Agent:
            return convert.agent(await get_agent(org_id, agent_id))

        return await self.graph.read(work)

    async def get_all_org_agents(self, org_id: str) -> list[models.Agent]:
        check_ids(org_id=org_id)

        async def work() -> list[models.Agent]:
            agents = await reachable([await get_org(org_id)], Org.has_agent)
            return [convert.agent(node) for _, node in agents]

        return await self.graph.read(work)

    async def get_all_user_agents(self, org_id: str, user_id: str) -> list[models.Agent]:
        check_ids(org_id=org_id, user_id=user_id)

        async def work() -> list[models.Agent]:
            agents = await reachable([await get_user(org_id, user_id)], User.has_agent)
            return [convert.agent(node) for _, node in agents]

        return await self.graph.read(work)

    async def update_agent(self, org_id: str, agent_id: str, new_agent_label: str) -> models.Agent:
        check_ids(org_id=org_id, agent_id=agent_id)
        check_name("new_agent_label", new_agent_label)

        async def work(_: VectorChanges) -> models.Agent:
            agent = await get_agent(org_id, agent_id)
            agent.agent_label = new_agent_label
            return convert.agent(await agent.save())

        return await self.graph.write(work)

    async def delete_agent(self, org_id: str, agent_id: str) -> None:
        """Delete the agent; its interactions and memories stay (they keep ``agent_id``)."""
        check_ids(org_id=org_id, agent_id=agent_id)

        async def work(_: VectorChanges) -> None:
            await delete_nodes([await get_agent(org_id, agent_id)])

        await self.graph.write(work)
