"""``memora-ogm demo``: a guided walk through the memory graph on a real Neo4j.

Its in-memory Qdrant store embeds by feature hashing, not Memora's fastembed models, so the
demo downloads no model (and says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta, timezone

from memora_ogm import Neo4jGraphInterface
from memora_ogm.engine import queries
from memora_ogm.engine.call import Call, Query
from memora_ogm.schema import models
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection
from memora_ogm.server.chain import connect_or_start
from memora_ogm.server.state import existing_connection
from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB


@contextmanager
def demo_connection() -> Iterator[Neo4jConnection]:
    """NEO4J_URI & co., else a server from `memora-ogm server start`, else the chain."""
    existing = existing_connection()
    with nullcontext(existing) if existing is not None else connect_or_start() as conn:
        yield conn


def _step(title: str) -> None:
    print(f"\n== {title}")


def _memories(memories: Iterable[models.Memory]) -> None:
    for memory in memories:
        print(f"   - {memory.memory}  (obtained {memory.obtained_at:%Y-%m-%d %H:%M %Z})")


def _ids(memory: models.Memory) -> dict[str, str]:
    return {"org_id": memory.org_id, "user_id": memory.user_id, "memory_id": memory.memory_id}


async def walkthrough(conn: Neo4jConnection, keep: bool = False) -> None:
    """The walk, after the server's versions; with ``keep``, the organisation stays for a
    look around (``memora-ogm graph``, ``inspect``, ``shell``) instead of being deleted."""
    vectors = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, vectors)
    try:
        for component in await graph.graph.components():
            print(f"{component['name']} {component['version']} {component['edition']} edition")
        apoc = await graph.graph.run(Call(Query(queries.APOC_VERSION, {}), list))
        print(f"APOC {apoc[0]['version']}")
        print(f"connected to {conn.uri} (database {conn.database}, via {conn.backend})")
        await graph.setup()
        print(
            "vector store: Qdrant local mode; embedder: feature hashing (offline, lexical: shared "
            "words and stems, no synonyms; QdrantDB's default is Memora's fastembed models, "
            "downloaded on first use)"
        )

        _step("An organisation, a user and an agent")
        org = await graph.create_organization("Northwind Travel")
        ann = await graph.create_user(org.org_id, "Ann")
        agent = await graph.create_agent(org.org_id, "Trip Planner")
        print(
            f"   org {org.org_name} ({org.org_id}), user {ann.user_name}, agent {agent.agent_label}"
        )

        monday = datetime.now(timezone.utc) - timedelta(days=3)
        placeholders = f"user_{ann.user_id}"
        first = MemoriesAndInteraction(
            interaction=[
                {"role": "user", "content": "Hi! I live in Oslo and I am vegetarian."},
                {"role": "assistant", "content": "Noted. Where would you like to travel?"},
                {"role": "user", "content": "Somewhere warm in March, with my cat Miso."},
            ],
            interaction_date=monday,
            memories=[
                MemoryToStore(memory=f"{placeholders} lives in Oslo", source_msg_block_pos=[0]),
                MemoryToStore(memory=f"{placeholders} is vegetarian", source_msg_block_pos=[0]),
                MemoryToStore(
                    memory=f"{placeholders}'s cat is called Miso and travels with them",
                    source_msg_block_pos=[2],
                ),
            ],
        )
        interaction_id, created = await graph.save_interaction_with_memories(
            org.org_id, agent.agent_id, ann.user_id, first
        )
        _step(f"Saved a conversation on {created:%Y-%m-%d} with three memories")
        saved = await graph.get_interaction(org.org_id, ann.user_id, interaction_id)
        print("\n".join(m.line("   ") for m in saved.messages or []))
        _memories(saved.memories or [])

        oslo = next(m for m in saved.memories or [] if "Oslo" in m.memory)
        update = MemoriesAndInteraction(
            interaction=[
                *first.interaction[:2],
                {
                    "role": "user",
                    "content": "Actually I moved to Bergen last week. Somewhere warm!",
                },
                {"role": "assistant", "content": "Bergen it is. How about Lisbon in March?"},
            ],
            interaction_date=datetime.now(timezone.utc),
            memories=[
                MemoryToStore(memory=f"{placeholders} wants a warm trip", source_msg_block_pos=[2])
            ],
            contrary_memories=[
                ContraryMemoryToStore(
                    memory=f"{placeholders} lives in Bergen",
                    source_msg_block_pos=[2],
                    existing_contrary_memory_id=oslo.memory_id,
                )
            ],
        )
        await graph.update_interaction_and_memories(
            org.org_id, agent.agent_id, ann.user_id, interaction_id, update
        )
        _step("Updated: message 2 rewritten, a reply appended, 'lives in Oslo' contradicted")
        updated = await graph.get_interaction(org.org_id, ann.user_id, interaction_id)
        print("\n".join(m.line("   ") for m in updated.messages or []))
        print("   the cat memory lost its source message but is kept:")
        cat = next(m for m in updated.memories or [] if "Miso" in m.memory)
        print(f"   - {cat.memory}  (message sources: {len(cat.message_sources or [])})")

        _step("The contradicted memory resolves to its newest version; its history, newest first")
        (current,) = await graph.fetch_user_memories_resolved([_ids(oslo)])
        _memories(await graph.get_user_memory_history(org.org_id, ann.user_id, current.memory_id))

        second_id, _ = await graph.save_interaction_with_memories(
            org.org_id,
            agent.agent_id,
            ann.user_id,
            MemoriesAndInteraction(
                interaction=[{"role": "user", "content": "I prefer trains to planes."}],
                interaction_date=datetime.now(timezone.utc),
                memories=[
                    MemoryToStore(memory=f"{placeholders} prefers trains", source_msg_block_pos=[0])
                ],
            ),
        )

        _step("Interactions, one page at a time (newest updated first)")
        page, skip = 1, 0
        while interactions := await graph.get_all_user_interactions(
            org.org_id, ann.user_id, with_their_memories=False, skip=skip, limit=1
        ):
            first_message = (interactions[0].messages or [models.MessageBlock(msg_position=0)])[0]
            print(f"   page {page}: {interactions[0].interaction_id} - {first_message.content}")
            page, skip = page + 1, skip + 1

        _step("Memories, two per page (newest obtained first)")
        page, skip = 1, 0
        while batch := await graph.get_all_user_memories(
            org.org_id, ann.user_id, skip=skip, limit=2
        ):
            print(f"   page {page}:")
            _memories(batch)
            page, skip = page + 1, skip + 2

        _step("Vector search 'where does the user live?', resolved through the graph")
        hits = await vectors.search_memory(
            "where does the user live", MemorySearchScope.USER, org.org_id, user_id=ann.user_id
        )
        for hit, score in hits[:2]:
            print(f"   score {score:.2f}: {hit.memory}")
        resolved = await graph.fetch_user_memories_resolved([_ids(hit) for hit, _ in hits[:2]])
        print("   resolved to the newest version of each contrary chain:")
        _memories(resolved)

        if keep:
            _step("Kept for a look around: Ann's memory graph as a page")
            print(f"   memora-ogm graph --org {org.org_id} --user {ann.user_id} -o graph.html")
        else:
            _step("Deleting")
            await graph.delete_user_interaction_and_its_memories(org.org_id, ann.user_id, second_id)
            left = await graph.get_all_user_memories(org.org_id, ann.user_id)
            print(f"   deleted the second interaction: {len(left)} memories left")
            await graph.delete_organization(org.org_id)
            remaining = await vectors.search_memory(
                "Bergen", MemorySearchScope.ORGANIZATION, org.org_id
            )
            organisations = [o.org_id for o in await graph.get_all_organizations()]
            print(
                f"   deleted the organisation: in graph {org.org_id in organisations}, "
                f"vectors left {len(remaining)}"
            )
        print("\ndemo finished")
    finally:
        await graph.close()
        await vectors.close()
