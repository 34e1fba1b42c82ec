"""Delete an organisation of 100k+ nodes on a Neo4j whose heap is capped at 512 MiB.

    python benchmarks/bench_delete_organization.py [--users 200]

Starts its own embedded Neo4j (the heap cap is the point), fills one organisation
with users, interactions, message chains, memories and dates through a bulk
loader, adds a second organisation that must survive, then times
``delete_organization`` and checks that nothing of the first is left.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from neo4j import GraphDatabase

from memora_ogm import Neo4jGraphInterface
from memora_ogm.server import LocalNeo4jServer

# Test data only: a bulk loader is the quickest way to make 100k nodes of the Memora shape.
LOAD = """
UNWIND range($first, $first + $users - 1) AS u
MATCH (o:Org {org_id: $org_id})
CREATE (user:User {org_id: $org_id, user_id: $org_id + '-u' + u, user_name: 'user ' + u,
                   created_at: datetime()})-[:BELONGS_TO]->(o)
CREATE (user)-[:INTERACTIONS_IN]->(ic:InteractionCollection {org_id: $org_id,
                                                            user_id: user.user_id})
CREATE (user)-[:HAS_MEMORIES]->(mc:MemoryCollection {org_id: $org_id, user_id: user.user_id})
CREATE (d:Date {org_id: $org_id, user_id: user.user_id, date: date()})
WITH user, ic, mc, d
UNWIND range(1, $interactions) AS i
CREATE (ic)-[:HAD_INTERACTION]->(it:Interaction {org_id: $org_id, user_id: user.user_id,
        agent_id: 'agent', interaction_id: user.user_id + '-i' + i,
        created_at: datetime(), updated_at: datetime()})-[:HAS_OCCURRENCE_ON]->(d)
WITH user, mc, d, it
CALL (it) {
    UNWIND range(0, $messages - 1) AS p
    CREATE (m:MessageBlock {msg_position: p, role: 'user', content: 'message ' + p})
    WITH m ORDER BY m.msg_position
    WITH collect(m) AS chain
    CALL (it, chain) { WITH it, chain[0] AS first CREATE (it)-[:FIRST_MESSAGE]->(first) }
    UNWIND range(0, size(chain) - 2) AS k
    WITH chain[k] AS a, chain[k + 1] AS b
    CREATE (a)-[:IS_NEXT]->(b)
}
CALL (it, mc, d, user) {
    UNWIND range(1, $memories) AS k
    CREATE (mc)-[:INCLUDES]->(mem:Memory {org_id: $org_id, user_id: user.user_id, agent_id: 'agent',
            interaction_id: it.interaction_id, memory_id: randomUUID(), memory: 'memory ' + k,
            obtained_at: datetime()})-[:INTERACTION_SOURCE]->(it)
    CREATE (mem)-[:DATE_OBTAINED]->(d)
}
"""

HEAP = (
    "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
    "RETURN attributes.HeapMemoryUsage.value.properties AS heap"
)


async def run(users: int) -> None:
    with LocalNeo4jServer(heap_mb=512, pagecache_mb=256) as conn:
        graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
        await graph.setup()
        doomed = await graph.create_organization("doomed")
        kept = await graph.create_organization("kept")
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            for org, count in ((doomed, users), (kept, 2)):
                for start in range(0, count, 20):
                    driver.execute_query(
                        LOAD,
                        org_id=org.org_id,
                        first=start,
                        users=min(20, count - start),
                        interactions=10,
                        messages=40,
                        memories=10,
                    )
            nodes = driver.execute_query(
                "MATCH (o:Org {org_id: $o}) "
                "RETURN COUNT { MATCH (n {org_id: $o}) } + COUNT { MATCH (:MessageBlock) } AS n",
                o=doomed.org_id,
            ).records[0]["n"]
            kept_before = driver.execute_query(
                "MATCH (n {org_id: $o}) RETURN count(n) AS n", o=kept.org_id
            ).records[0]["n"]
            print(
                f"organisation to delete: about {nodes:,} nodes (heap 512 MiB, page cache 256 MiB)"
            )

            started = time.perf_counter()
            await graph.delete_organization(doomed.org_id)
            elapsed = time.perf_counter() - started

            left = driver.execute_query(
                "MATCH (n {org_id: $o}) RETURN count(n) AS n", o=doomed.org_id
            ).records[0]["n"]
            kept_after = driver.execute_query(
                "MATCH (n {org_id: $o}) RETURN count(n) AS n", o=kept.org_id
            ).records[0]["n"]
            heap = driver.execute_query(HEAP).records[0]["heap"]
        await graph.close()
    print(f"delete_organization: {elapsed:.1f} s, {nodes / elapsed:,.0f} nodes/s")
    print(
        f"left of the deleted organisation: {left}; "
        f"other organisation {kept_before} -> {kept_after}"
    )
    print(
        f"server heap: max {heap['max'] / 2**20:.0f} MiB, "
        f"used at the end {heap['used'] / 2**20:.0f} MiB"
    )
    if left or kept_after != kept_before:
        raise SystemExit("cascade check failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200, help="users in the deleted organisation")
    asyncio.run(run(parser.parse_args().users))


if __name__ == "__main__":
    main()
