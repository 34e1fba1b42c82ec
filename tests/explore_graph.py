"""A small graph to explore from the shell and ``inspect``: two tenants, each with a user
whose first conversation's memory is contradicted by a later one.

Every text of a tenant starts with its label, so a test can tell whether anything of
the other tenant shows up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection
from memora_ogm.sync import Neo4jGraphInterface


@dataclass(frozen=True)
class Tenant:
    label: str
    org_id: str
    user_id: str
    agent_id: str
    first_interaction: str
    second_interaction: str
    old_memory: str  # "lives in Oslo", superseded by new_memory
    new_memory: str  # "lives in Bergen"
    pet_memory: str


def seed_tenant(memora: Neo4jGraphInterface, label: str) -> Tenant:
    org = memora.create_organization(f"{label} Travel")
    user = memora.create_user(org.org_id, f"{label}Ann")
    agent = memora.create_agent(org.org_id, f"{label} Planner")
    me = f"user_{user.user_id}"
    first, _ = memora.save_interaction_with_memories(
        org.org_id,
        agent.agent_id,
        user.user_id,
        MemoriesAndInteraction(
            interaction=[
                {"role": "user", "content": f"{label}: I live in Oslo with my cat Miso."},
                {"role": "assistant", "content": f"{label}: Noted, Oslo and Miso."},
            ],
            interaction_date=datetime.now(timezone.utc) - timedelta(days=2),
            memories=[
                MemoryToStore(memory=f"{me} lives in Oslo", source_msg_block_pos=[0]),
                MemoryToStore(memory=f"{me}'s cat is called Miso", source_msg_block_pos=[0]),
            ],
        ),
    )
    old = {m.memory: m.memory_id for m in memora.get_all_user_memories(org.org_id, user.user_id)}
    second, _ = memora.save_interaction_with_memories(
        org.org_id,
        agent.agent_id,
        user.user_id,
        MemoriesAndInteraction(
            interaction=[{"role": "user", "content": f"{label}: I moved to Bergen."}],
            contrary_memories=[
                ContraryMemoryToStore(
                    memory=f"{me} lives in Bergen",
                    source_msg_block_pos=[0],
                    existing_contrary_memory_id=old[f"{label}Ann lives in Oslo"],
                )
            ],
        ),
    )
    new = memora.get_interaction(org.org_id, user.user_id, second).memories or []
    return Tenant(
        label=label,
        org_id=org.org_id,
        user_id=user.user_id,
        agent_id=agent.agent_id,
        first_interaction=first,
        second_interaction=second,
        old_memory=old[f"{label}Ann lives in Oslo"],
        new_memory=new[0].memory_id,
        pet_memory=old[f"{label}Ann's cat is called Miso"],
    )


def seed_two_tenants(conn: Neo4jConnection) -> tuple[Tenant, Tenant]:
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    try:
        memora.setup()
        return seed_tenant(memora, "Alpha"), seed_tenant(memora, "Beta")
    finally:
        memora.close()


def cli_env(conn: Neo4jConnection, **extra: str) -> dict[str, str]:
    """The environment of a ``memora-ogm`` child process pointed at this server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(conn.env())
    env.update(extra)
    return env
