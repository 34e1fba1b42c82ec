# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Agents: of an organisation, and optionally of one of its users."""

from __future__ import annotations

from memora_ogm import convert
from memora_ogm._sync.component import GraphComponent, get_agent, get_org, get_user, locked_org
from memora_ogm._sync.graph import VectorChanges
from memora_ogm._sync.nodes import Agent, Org, User
from memora_ogm._sync.ogm import connect_many, delete_nodes, reachable
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_name


class Neo4jAgent(GraphComponent):
    def create_agent(
        self, org_id: str, agent_label: str, user_id: str | None = None
    ) -> models.Agent:
        check_ids(org_id=org_id)
        check_name("agent_label", agent_label)
        if user_id is not None:
            check_ids(user_id=user_id)

        def work(_: VectorChanges) -> models.Agent:
            org = locked_org(org_id)
            user = get_user(org_id, user_id) if user_id is not None else None
            agent = Agent(org_id=org_id, agent_label=agent_label, user_id=user_id).save()
            connect_many(
                (Org.has_agent, [(org, agent)]),
                (User.has_agent, [(user, agent)] if user is not None else []),
            )
            return convert.agent(agent)

        agent = self.graph.write(work)
        self.logger.info("created agent %s", agent.agent_id)
        return agent

    def get_agent(self, org_id: str, agent_id: str) -> models.Agent:
        check_ids(org_id=org_id, agent_id=agent_id)

        def work() -> models.Agent:
            return convert.agent(get_agent(org_id, agent_id))

        return self.graph.read(work)

    def get_all_org_agents(self, org_id: str) -> list[models.Agent]:
        check_ids(org_id=org_id)

        def work() -> list[models.Agent]:
            agents = reachable([get_org(org_id)], Org.has_agent)
            return [convert.agent(node) for _, node in agents]

        return self.graph.read(work)

    def get_all_user_agents(self, org_id: str, user_id: str) -> list[models.Agent]:
        check_ids(org_id=org_id, user_id=user_id)

        def work() -> list[models.Agent]:
            agents = reachable([get_user(org_id, user_id)], User.has_agent)
            return [convert.agent(node) for _, node in agents]

        return self.graph.read(work)

    def update_agent(self, org_id: str, agent_id: str, new_agent_label: str) -> models.Agent:
        check_ids(org_id=org_id, agent_id=agent_id)
        check_name("new_agent_label", new_agent_label)

        def work(_: VectorChanges) -> models.Agent:
            agent = get_agent(org_id, agent_id)
            agent.agent_label = new_agent_label
            return convert.agent(agent.save())

        return self.graph.write(work)

    def delete_agent(self, org_id: str, agent_id: str) -> None:
        """Delete the agent; its interactions and memories stay (they keep ``agent_id``)."""
        check_ids(org_id=org_id, agent_id=agent_id)

        def work(_: VectorChanges) -> None:
            delete_nodes([get_agent(org_id, agent_id)])

        self.graph.write(work)
