"""Pictures of the memory graph (``graph_of``, ``memora-ogm graph``): what they hold against
the stored graph, the page drawn in headless Chromium, and a user of 5,000 interactions."""

from __future__ import annotations

import html
import io
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import DAY, LATER, World, chat, conversation, make_world, memory_ids, save
from neo4j import Driver
from PIL import Image
from playwright.async_api import async_playwright
from transfer_helpers import build_organisation

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.nodes import NODES
from memora_ogm.calls.picture import graph_of
from memora_ogm.cli import main
from memora_ogm.cli.demo import walkthrough
from memora_ogm.cli.shell import namespace
from memora_ogm.errors import OrganizationNotFound, UserNotFound
from memora_ogm.picture import GraphEdge, MemoryGraph
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

LONG = chat(*(f"message {position}" for position in range(30)))


async def _contradicting_user(memora: Any) -> tuple[World, dict[str, str], dict[str, str]]:
    """Three interactions: an old one whose memory the long one supersedes, the long one
    (30 messages), and the newest, whose memory supersedes one of the long one's. Returns
    the world, the interactions and the memories by name."""
    world = await make_world(memora)
    user = f"user_{world.user_id}"
    old = await save(
        memora,
        world,
        conversation(
            chat("I live in Oslo", "Nice"),
            when=DAY - timedelta(days=2),
            memories=[(f"{user} lives in Oslo", [0])],
        ),
    )
    oslo = (await memory_ids(memora, world, old))["Ann lives in Oslo"]
    long = await save(
        memora,
        world,
        conversation(
            LONG,
            when=DAY,
            memories=[(f"{user} likes tea, says agent_{world.agent_id}", [0, 1])],
            contrary=[(f"{user} lives in Bergen", [4], oslo)],
        ),
    )
    in_long = await memory_ids(memora, world, long)
    tea, bergen = in_long["Ann likes tea, says Bot"], in_long["Ann lives in Bergen"]
    new = await save(
        memora,
        world,
        conversation(
            chat("Coffee now", "Noted"), when=LATER, contrary=[(f"{user} prefers coffee", [0], tea)]
        ),
    )
    coffee = (await memory_ids(memora, world, new))["Ann prefers coffee"]
    interactions = {"old": old, "long": long, "new": new}
    return world, interactions, {"oslo": oslo, "tea": tea, "bergen": bergen, "coffee": coffee}


def _stored(driver: Driver, world: World, limit: int) -> tuple[set[str], set[GraphEdge]]:
    """The nodes and edges a picture of the user's ``limit`` newest interactions must hold,
    read from the graph as stored (messages named by their interaction and position)."""
    records, _, _ = driver.execute_query(
        """
        MATCH (:User {org_id: $org_id, user_id: $user_id})-[:INTERACTIONS_IN]->()
              -[:HAD_INTERACTION]->(i:Interaction)
        WITH i ORDER BY i.updated_at DESC LIMIT $limit
        WITH collect(i) AS shown
        UNWIND shown AS i
        OPTIONAL MATCH (mem:Memory)-[:INTERACTION_SOURCE]->(i)
        WITH shown, collect(mem) AS taken
        CALL (shown, taken) {
          UNWIND shown AS i
          MATCH (i)-[:FIRST_MESSAGE]->(first)
          RETURN ['interaction:' + i.interaction_id, 'message:' + i.interaction_id + ':0',
                  'FIRST_MESSAGE'] AS edge
          UNION
          UNWIND shown AS i
          MATCH (i)-[:FIRST_MESSAGE]->()-[:IS_NEXT*0..]->(a)-[:IS_NEXT]->(b)
          RETURN ['message:' + i.interaction_id + ':' + a.msg_position,
                  'message:' + i.interaction_id + ':' + b.msg_position, 'IS_NEXT'] AS edge
          UNION
          UNWIND shown AS i
          MATCH (i)-[:HAS_OCCURRENCE_ON]->(d)
          RETURN ['interaction:' + i.interaction_id, 'date:' + toString(d.date),
                  'HAS_OCCURRENCE_ON'] AS edge
          UNION
          UNWIND taken AS mem
          MATCH (mem)-[:INTERACTION_SOURCE]->(i)
          RETURN ['memory:' + mem.memory_id, 'interaction:' + i.interaction_id,
                  'INTERACTION_SOURCE'] AS edge
          UNION
          UNWIND taken AS mem
          MATCH (mem)-[:MESSAGE_SOURCE]->(m)<-[:IS_NEXT*0..]-()<-[:FIRST_MESSAGE]-(i)
          RETURN ['memory:' + mem.memory_id, 'message:' + i.interaction_id + ':' + m.msg_position,
                  'MESSAGE_SOURCE'] AS edge
          UNION
          UNWIND taken AS mem
          MATCH (mem)-[:DATE_OBTAINED]->(d)
          RETURN ['memory:' + mem.memory_id, 'date:' + toString(d.date), 'DATE_OBTAINED'] AS edge
          UNION
          UNWIND taken AS mem
          MATCH (a:Memory)-[:CONTRARY_UPDATE]->(b:Memory) WHERE a = mem OR b = mem
          RETURN ['memory:' + a.memory_id, 'memory:' + b.memory_id, 'CONTRARY_UPDATE'] AS edge
        }
        RETURN collect(edge) AS edges,
               [i IN shown | 'interaction:' + i.interaction_id] AS interactions
        """,
        org_id=world.org_id,
        user_id=world.user_id,
        limit=limit,
    )
    edges = {GraphEdge(*edge) for edge in records[0]["edges"]}
    nodes = set(records[0]["interactions"]) | {edge.source for edge in edges}
    return nodes | {edge.target for edge in edges}, edges


def _chain(graph: MemoryGraph, start: str) -> list[str]:
    """The messages reached from ``start`` along FIRST_MESSAGE, then IS_NEXT."""
    following = {e.source: e.target for e in graph.edges if e.type in ("FIRST_MESSAGE", "IS_NEXT")}
    chain = []
    while start in following:
        start = following[start]
        chain.append(start)
    return chain


def _kinds(graph: MemoryGraph) -> dict[str, int]:
    counted: dict[str, int] = {}
    for node in graph.nodes:
        counted[node.kind] = counted.get(node.kind, 0) + 1
    return counted


async def test_a_users_graph_is_the_stored_graph_of_its_recent_interactions(
    memora: Any, driver: Driver
) -> None:
    world, interactions, memories = await _contradicting_user(memora)

    graph = await memora.graph_of(world.org_id, world.user_id, limit=2)

    nodes, edges = _stored(driver, world, 2)
    assert {node.id for node in graph.nodes} == nodes
    assert set(graph.edges) == edges
    assert len(graph.edges) == len(edges)  # each edge once
    assert f"interaction:{interactions['old']}" not in nodes  # outside the limit
    assert _kinds(graph) == {"Interaction": 2, "MessageBlock": 32, "Memory": 4, "Date": 2}
    # the long chain, in order
    long = interactions["long"]
    assert _chain(graph, f"interaction:{long}") == [f"message:{long}:{p}" for p in range(30)]
    # contradiction history both ways, into an interaction outside the limit too
    history = {(e.source, e.target) for e in graph.edges if e.type == "CONTRARY_UPDATE"}
    memory = {name: f"memory:{memory_id}" for name, memory_id in memories.items()}
    assert history == {
        (memory["oslo"], memory["bergen"]),
        (memory["tea"], memory["coffee"]),
    }
    oslo = graph.node(memory["oslo"])
    assert oslo.properties["interaction_id"] == interactions["old"]
    assert oslo.caption == "Ann lives in Oslo"
    tea = graph.node(memory["tea"])
    assert tea.properties["memory"] == "Ann likes tea, says Bot"  # placeholders resolved
    assert graph.node(f"message:{long}:4").properties["content"] == "message 4"
    assert graph.node(f"date:{DAY.date().isoformat()}").kind == "Date"
    assert graph.title == "Ann: the 2 most recent interaction(s)"

    whole = await memora.graph_of(world.org_id, world.user_id)
    assert {node.id for node in whole.nodes} == _stored(driver, world, 20)[0]
    assert _kinds(whole)["Interaction"] == 3


async def test_an_organisations_graph_has_its_users_and_agents_with_counts(
    memora: Any, driver: Driver
) -> None:
    org = await build_organisation(memora)

    graph = await memora.graph_of(org.org_id)

    records, _, _ = driver.execute_query(
        "MATCH (u:User {org_id: $org_id}) RETURN u.user_id AS user_id, "
        "COUNT { (:Interaction {org_id: $org_id, user_id: u.user_id}) } AS interactions, "
        "COUNT { (:Memory {org_id: $org_id, user_id: u.user_id}) } AS memories",
        org_id=org.org_id,
    )
    for record in records:
        node = graph.node(f"user:{record['user_id']}")
        assert node.properties["interactions"] == record["interactions"] > 0
        assert node.properties["memories"] == record["memories"] > 0
    assert _kinds(graph) == {"Org": 1, "Agent": 3, "User": 2}
    root = f"org:{org.org_id}"
    agents = (org.bot, org.anns_agent, org.bobs_agent)
    assert set(graph.edges) == {
        GraphEdge(f"user:{org.ann}", root, "BELONGS_TO"),
        GraphEdge(f"user:{org.bob}", root, "BELONGS_TO"),
        *(GraphEdge(root, f"agent:{a}", "HAS_AGENT") for a in agents),
        GraphEdge(f"user:{org.ann}", f"agent:{org.anns_agent}", "HAS_AGENT"),
        GraphEdge(f"user:{org.bob}", f"agent:{org.bobs_agent}", "HAS_AGENT"),
    }
    assert graph.node(root).properties["users"] == 2
    assert graph.title == "Acme: 2 user(s), 3 agent(s)"
    one = await memora.graph_of(org.org_id, limit=1)
    assert _kinds(one) == {"Org": 1, "Agent": 1, "User": 1}


async def test_a_missing_organisation_or_user_is_not_found(memora: Any) -> None:
    world = await make_world(memora)
    with pytest.raises(UserNotFound):
        await memora.graph_of(world.org_id, "nobody")
    with pytest.raises(OrganizationNotFound):
        await memora.graph_of("nowhere")
    with pytest.raises(ValueError):
        await memora.graph_of(world.org_id, world.user_id, limit=-1)


@pytest.fixture
async def facade(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Neo4jGraphInterface]:
    """The async facade alone on an emptied graph (for what one twin shows as well)."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    async with Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database) as it:
        await it.setup()
        yield it


@dataclass
class Drawn:
    """What headless Chromium made of a page: its graph as drawn, and what it fetched."""

    nodes: int
    edges: int
    visible: int
    ids: list[str]
    screenshot: bytes
    requests: list[str]
    errors: list[str]
    #: From opening the page to its graph laid out (the browser already started).
    seconds: float


async def _drawn(page_file: Path) -> Drawn:
    """Open the page in headless Chromium, wait for its graph and read it from the page
    (from its frame when the graph is in one, as a notebook shows it)."""
    requests: list[str] = []
    errors: list[str] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=_browser(), args=["--no-sandbox"]
        )
        page = await browser.new_page(viewport={"width": 1200, "height": 800})
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        opened = time.perf_counter()
        await page.goto(page_file.as_uri())
        frame = page.frames[-1]
        await frame.wait_for_function("window.cy && cy.nodes().length > 0")
        seconds = time.perf_counter() - opened
        counts = await frame.evaluate(
            "[cy.nodes().length, cy.edges().length, cy.nodes().filter(n => n.visible() "
            "&& n.renderedBoundingBox().w > 0).length, cy.nodes().map(n => n.id())]"
        )
        screenshot = await page.screenshot()
        await browser.close()
    nodes, edges, visible, ids = counts
    return Drawn(nodes, edges, visible, ids, screenshot, requests, errors, seconds)


def _browser() -> str | None:
    """A Chromium of the system (scripts/test.sh installs Debian's), else Playwright's own."""
    return next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )


async def test_the_page_draws_every_node_offline_in_headless_chromium(
    facade: Neo4jGraphInterface,
    neo4j_connection: Neo4jConnection,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    world, _, _ = await _contradicting_user(facade)
    page_file = tmp_path / "graph.html"
    command = ["graph", "--org", world.org_id, "--user", world.user_id, "-o", str(page_file)]
    assert main(command, environ=neo4j_connection.env()) == 0
    assert capsys.readouterr().out.startswith(f"{page_file}: Ann: the 3 most recent")
    graph = await facade.graph_of(world.org_id, world.user_id)

    drawn = await _drawn(page_file)
    framed = graph._repr_html_()  # Jupyter: the same page, in a frame of its own

    assert framed.startswith('<iframe srcdoc="')
    assert html.unescape(framed.split('"')[1]) == page_file.read_text(encoding="utf-8")
    notebook = tmp_path / "notebook.html"
    notebook.write_text(f"<!DOCTYPE html><html><body><h1>Out[1]:</h1>{framed}</body></html>")
    in_frame = await _drawn(notebook)
    assert (in_frame.nodes, in_frame.edges, in_frame.errors) == (
        len(graph.nodes),
        len(graph.edges),
        [],
    )
    assert drawn.errors == []
    assert [url for url in drawn.requests if not url.startswith("file:")] == []  # all inline
    assert drawn.nodes == len(graph.nodes) == drawn.visible  # the page's own data
    assert drawn.edges == len(graph.edges)
    assert set(drawn.ids) == {node.id for node in graph.nodes}
    image = Image.open(io.BytesIO(drawn.screenshot)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # not blank: nodes, edges, text
    white = max(colours)[0]
    assert image.width * image.height - white > 0.005 * image.width * image.height


async def test_a_user_of_5000_interactions_is_drawn_from_its_newest_only(
    facade: Neo4jGraphInterface,
    neo4j_driver: Driver,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    world = await make_world(facade)
    started = time.perf_counter()
    neo4j_driver.execute_query(
        """
        MATCH (:User {org_id: $org_id, user_id: $user_id})-[:INTERACTIONS_IN]->(c),
              (:User {org_id: $org_id, user_id: $user_id})-[:HAS_MEMORIES]->(mc)
        UNWIND range(0, 4999) AS k
        WITH c, mc, k, $day + duration({minutes: k}) AS at
        CREATE (c)-[:HAD_INTERACTION]->(i:Interaction {org_id: $org_id, user_id: $user_id,
                 agent_id: $agent_id, interaction_id: 'i' + k, created_at: at, updated_at: at})
        CREATE (i)-[:FIRST_MESSAGE]->(m:MessageBlock {msg_position: 0, role: 'user',
                 content: 'I said ' + k})-[:IS_NEXT]->(:MessageBlock {msg_position: 1,
                 role: 'assistant', content: 'Noted'})
        MERGE (d:Date {org_id: $org_id, user_id: $user_id, date: date(at)})
        CREATE (i)-[:HAS_OCCURRENCE_ON]->(d)
        CREATE (mc)-[:INCLUDES]->(mem:Memory {org_id: $org_id, user_id: $user_id,
                 agent_id: $agent_id, interaction_id: 'i' + k, memory_id: randomUUID(),
                 memory: 'said ' + k, obtained_at: at})
        CREATE (mem)-[:INTERACTION_SOURCE]->(i), (mem)-[:MESSAGE_SOURCE]->(m),
               (mem)-[:DATE_OBTAINED]->(d)
        """,
        org_id=world.org_id,
        user_id=world.user_id,
        agent_id=world.agent_id,
        day=DAY,
    )
    built = time.perf_counter() - started

    statements = facade.graph.statements
    started = time.perf_counter()
    graph = await facade.graph_of(world.org_id, world.user_id, limit=25)
    read = time.perf_counter() - started
    page_file = graph.write_html(tmp_path / "graph.html")
    drawn = await _drawn(page_file)
    opened = time.perf_counter() - started
    started = time.perf_counter()
    again = await facade.graph_of(world.org_id, world.user_id, limit=25)
    planned = time.perf_counter() - started  # its plan cached by the server now

    assert drawn.nodes == len(graph.nodes) and drawn.errors == []
    assert again == graph
    assert facade.graph.statements == statements + 2
    shown = [node.id for node in graph.nodes if node.kind == "Interaction"]
    assert shown == [f"interaction:i{k}" for k in range(4999, 4974, -1)]  # newest first
    assert _kinds(graph) == {"Interaction": 25, "MessageBlock": 50, "Memory": 25, "Date": 1}
    statement = graph_of(NODES, world.org_id, world.user_id, 25).statement
    assert statement is not None
    query, params = statement.compile()
    assert "LIMIT $interactions_limit" in query and params["interactions_limit"] == 25
    with capsys.disabled():
        print(
            f"\n5,000 interactions built in {built:.2f} s; graph_of(limit=25) in {read:.3f} s "
            f"({len(graph.nodes)} nodes), the page ({page_file.stat().st_size // 1024} KiB) "
            f"laid out in Chromium in {drawn.seconds:.2f} s, all of it {opened:.2f} s with the "
            "browser's start; "
            f"the same call again in {planned:.3f} s"
        )


async def test_the_demos_user_is_drawn_by_the_graph_command(
    facade: Neo4jGraphInterface,
    neo4j_connection: Neo4jConnection,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await walkthrough(neo4j_connection, keep=True)
    told = capsys.readouterr().out.split("memora-ogm graph ")[1].split("\n")[0].split()
    assert told[4:] == ["-o", "graph.html"]
    org_id, user_id = told[1], told[3]

    page_file = tmp_path / "graph.html"
    assert main(["graph", *told[:4], "-o", str(page_file)], environ=neo4j_connection.env()) == 0
    assert capsys.readouterr().out.startswith(f"{page_file}: Ann: the 2 most recent")
    graph = await facade.graph_of(org_id, user_id)
    assert [e.type for e in graph.edges].count("CONTRARY_UPDATE") == 1  # Oslo, then Bergen
    assert (await _drawn(page_file)).nodes == len(graph.nodes)


async def test_the_shells_show_writes_a_page_and_names_it(
    facade: Neo4jGraphInterface,
    neo4j_connection: Neo4jConnection,
    capsys: pytest.CaptureFixture[str],
) -> None:
    world, _, memories = await _contradicting_user(facade)
    conn = neo4j_connection
    with sync.Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database) as memora:
        namespace(memora, None)["show"](world.org_id, world.user_id, graph=True)
    written, told = capsys.readouterr().out.strip().split(": ")
    assert told == "open it in a browser"
    page = Path(written)
    try:
        assert f"memory:{memories['bergen']}" in page.read_text(encoding="utf-8")
    finally:
        page.unlink()
