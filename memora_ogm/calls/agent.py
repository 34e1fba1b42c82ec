"""Agents: of an organisation, and optionally of one of its users."""

from __future__ import annotations

from memora_ogm.calls.organization import match_org
from memora_ogm.calls.user import match_user
from memora_ogm.engine import convert
from memora_ogm.engine.call import Call, Landed, changed, nothing
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.unit_of_work import Prepared, Ref, UnitOfWork
from memora_ogm.errors import AgentNotFound
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_name


def match_agent(nodes: Nodes, work: UnitOfWork, org_id: str, agent_id: str) -> Ref:
    """Declare the agent ``AgentNotFound`` requires."""
    return work.match(
        nodes.Agent, lambda: AgentNotFound(org_id, agent_id), org_id=org_id, agent_id=agent_id
    )


#: The fixed-shape reads, declared and compiled once (see ``Prepared``).
AGENT = Prepared(lambda nodes, work, **ids: work.output("agent", match_agent(nodes, work, **ids)))
ORG_AGENTS = Prepared(
    lambda nodes, work, org_id: work.output(
        "agents", work.reachable(match_org(nodes, work, org_id), nodes.Org.has_agent)
    )
)
USER_AGENTS = Prepared(
    lambda nodes, work, **ids: work.output(
        "agents", work.reachable(match_user(nodes, work, **ids), nodes.User.has_agent)
    )
)


def create_agent(
    nodes: Nodes, org_id: str, agent_label: str, user_id: str | None = None
) -> Call[models.Agent]:
    """One statement; it locks the organisation, which its deletion locks last."""
    check_ids(org_id=org_id)
    check_name("agent_label", agent_label)
    if user_id is not None:
        check_ids(user_id=user_id)
    work = UnitOfWork()
    org = match_org(nodes, work, org_id, lock=True)
    user = match_user(nodes, work, org_id, user_id) if user_id is not None else None
    agent, props = work.create(nodes.Agent, org_id=org_id, agent_label=agent_label, user_id=user_id)
    work.link(nodes.Org.has_agent, org, agent)
    if user is not None:
        work.link(nodes.User.has_agent, user, agent)
    agent_id = props["agent_id"]
    return Call(
        work,
        lambda _: convert.read(nodes.Agent, models.Agent, props),
        write=True,
        landed=Landed(nodes.Agent, {"org_id": org_id, "agent_id": agent_id}),
        log=f"created agent {agent_id}",
    )


def get_agent(nodes: Nodes, org_id: str, agent_id: str) -> Call[models.Agent]:
    check_ids(org_id=org_id, agent_id=agent_id)
    return Call(
        AGENT.bind(nodes, org_id=org_id, agent_id=agent_id),
        convert.output("agent", nodes.Agent, models.Agent),
    )


def get_all_org_agents(nodes: Nodes, org_id: str) -> Call[list[models.Agent]]:
    check_ids(org_id=org_id)
    return Call(
        ORG_AGENTS.bind(nodes, org_id=org_id), convert.outputs("agents", nodes.Agent, models.Agent)
    )


def get_all_user_agents(nodes: Nodes, org_id: str, user_id: str) -> Call[list[models.Agent]]:
    check_ids(org_id=org_id, user_id=user_id)
    return Call(
        USER_AGENTS.bind(nodes, org_id=org_id, user_id=user_id),
        convert.outputs("agents", nodes.Agent, models.Agent),
    )


def update_agent(
    nodes: Nodes, org_id: str, agent_id: str, new_agent_label: str
) -> Call[models.Agent]:
    check_ids(org_id=org_id, agent_id=agent_id)
    check_name("new_agent_label", new_agent_label)
    work = UnitOfWork()
    agent = match_agent(nodes, work, org_id, agent_id)
    return changed(work, agent, "agent", models.Agent, agent_label=new_agent_label)


def delete_agent(nodes: Nodes, org_id: str, agent_id: str) -> Call[None]:
    """Delete the agent; its interactions and memories stay (they keep ``agent_id``)."""
    check_ids(org_id=org_id, agent_id=agent_id)
    work = UnitOfWork()
    work.delete(match_agent(nodes, work, org_id, agent_id))
    key = {"org_id": org_id, "agent_id": agent_id}
    return Call(work, nothing, write=True, landed=Landed(nodes.Agent, key, present=False))
