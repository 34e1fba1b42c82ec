"""neomodel's own API on both twins of the node classes, over a graph the facade wrote.

neomodel is connected here as a Django or Flask application connects it: its own
settings (``config.DATABASE_URL``) and its own drivers, set before the facade exists
and restored afterwards. The facade runs next to it, on its own driver, and reads back
what the models write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta, timezone
from typing import Any

import pytest
from interaction_helpers import DAY, LATER, chat, conversation, make_world, rows, save
from neo4j import Driver
from neomodel import (
    AsyncStructuredNode,
    AsyncStructuredRel,
    Q,
    StructuredNode,
    StructuredRel,
    adb,
    db,
    get_config,
)
from neomodel.exceptions import AttemptedCardinalityViolation, UniqueProperty
from neomodel.util import RelationshipDirection
from neomodel_story import Story, done, model_name, relationship_attributes, write_story

from memora_ogm import nodes
from memora_ogm._async import nodes as private_async_nodes
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

NODE_NAMES = [cls.__name__ for cls in nodes.NODE_CLASSES]


@dataclass(frozen=True)
class Twin:
    """One twin of the node classes, as an application imports it from ``memora_ogm.nodes``."""

    prefix: str
    database: Any

    def cls(self, name: str) -> Any:
        return getattr(nodes, self.prefix + name)


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin("", db) if request.param == "sync" else Twin("Async", adb)


@pytest.fixture(scope="module")
async def app_neomodel(neo4j_connection: Neo4jConnection) -> AsyncIterator[None]:
    """neomodel configured by the application, before any interface exists."""
    config = get_config()
    saved = config.database_url
    config.database_url = neo4j_connection.neomodel_url
    db.set_connection(url=config.database_url)
    await adb.set_connection(url=config.database_url)
    yield
    db.close_connection()
    await adb.close_connection()
    config.database_url = saved


@dataclass(frozen=True)
class Written:
    story: Story
    memora: Neo4jGraphInterface


@pytest.fixture(scope="module")
async def written(
    app_neomodel: None, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Written]:
    """The story, written once by the async facade, which stays open to read back."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    await memora.setup()
    yield Written(await write_story(memora), memora)
    await memora.close()


def test_both_twins_are_public_from_one_module() -> None:
    assert len(relationship_attributes()) == 28
    assert len(nodes.REL_CLASSES) == 13
    pairs = [
        *zip(nodes.NODE_CLASSES, nodes.ASYNC_NODE_CLASSES, strict=True),
        *zip(nodes.REL_CLASSES, nodes.ASYNC_REL_CLASSES, strict=True),
    ]
    for sync_class, async_class in pairs:
        assert getattr(nodes, sync_class.__name__) is sync_class
        assert getattr(nodes, "Async" + async_class.__name__) is async_class
        assert getattr(private_async_nodes, async_class.__name__) is async_class
        assert issubclass(sync_class, (StructuredNode, StructuredRel))
        assert issubclass(async_class, (AsyncStructuredNode, AsyncStructuredRel))


@pytest.mark.parametrize(("class_name", "attribute"), relationship_attributes())
async def test_traverse_and_relationship_along_every_relationship_attribute(
    written: Written, twin: Twin, driver: Driver, class_name: str, attribute: str
) -> None:
    cls = twin.cls(class_name)
    definition = getattr(cls, attribute).definition
    getattr(cls, attribute).lookup_node_class()
    target = twin.cls(definition["node_class"].__name__)
    hop = (
        "-[r:{}]->" if definition["direction"] == RelationshipDirection.OUTGOING else "<-[r:{}]-"
    ).format(definition["relation_type"])
    expected = {
        (row["a"], row["r"], row["b"])
        for row in rows(
            driver,
            f"MATCH (a:{cls.__label__}){hop}(b:{target.__label__}) "
            "RETURN elementId(a) AS a, elementId(r) AS r, elementId(b) AS b",
        )
    }
    assert expected, "the story holds this relationship"

    found = await done(cls.nodes.traverse(attribute).all())
    model = twin.cls(model_name(definition["relation_type"]))
    assert {(a.element_id, r.element_id, b.element_id) for a, b, r in found} == expected
    assert all(
        isinstance(a, cls) and isinstance(b, target) and isinstance(r, model) for a, b, r in found
    )

    start, end, rel = found[0]
    typed = await done(getattr(start, attribute).relationship(end))
    assert isinstance(typed, model) and typed.element_id == rel.element_id
    # The declared cardinality holds on every node the facade wrote: reading it raises nothing.
    for node in await done(cls.nodes.all()):
        await done(getattr(node, attribute).all())


async def test_get_filter_exclude_and_order_by_with_aware_and_naive_datetimes_and_dates(
    written: Written, twin: Twin
) -> None:
    story = written.story
    memory, date, interaction = (twin.cls(name) for name in ("Memory", "Date", "Interaction"))
    later_naive = LATER.replace(tzinfo=None)  # taken as UTC
    later_elsewhere = LATER.astimezone(timezone(timedelta(hours=-5)))
    for later in (LATER, later_naive, later_elsewhere):
        newer = await done(memory.nodes.filter(obtained_at__gte=later, **story.owner).all())
        assert [m.memory_id for m in newer] == [story.bergen]
        older = memory.nodes.exclude(obtained_at__gte=later).filter(**story.owner)
        assert [m.memory_id for m in await done(older.order_by("memory_id").all())] == sorted(
            [story.oslo, story.runs]
        )
    bergen = await done(memory.nodes.get(obtained_at=later_naive, **story.owner))
    assert bergen.memory_id == story.bergen
    assert bergen.obtained_at == LATER and bergen.obtained_at.tzinfo is not None

    newest_first = await done(
        memory.nodes.filter(**story.owner).order_by("-obtained_at", "memory_id").all()
    )
    assert [m.memory_id for m in newest_first] == [story.bergen, *sorted([story.oslo, story.runs])]
    facade = await written.memora.get_all_user_memories(story.org_id, story.user_id, None)
    assert [m.memory_id for m in facade][0] == newest_first[0].memory_id

    days = await done(date.nodes.filter(**story.owner).order_by("date").all())
    assert [d.date for d in days] == [DAY.date(), LATER.date()]
    later_days = await done(date.nodes.filter(date__gt=DAY.date(), **story.owner).all())
    assert [d.date for d in later_days] == [LATER.date()]
    assert await done(date.nodes.get_or_none(date=DAY.date() - timedelta(days=1))) is None

    first = await done(interaction.nodes.get(interaction_id=story.first_interaction))
    assert (first.created_at, first.updated_at) == (DAY, LATER)
    assert first.created_at.tzinfo is not None


async def test_q_objects(written: Written, twin: Twin) -> None:
    story = written.story
    memory = twin.cls("Memory")
    either = Q(memory__icontains="oslo") | Q(memory__icontains="bergen")
    found = await done(memory.nodes.filter(either, **story.owner).order_by("obtained_at").all())
    assert [m.memory_id for m in found] == [story.oslo, story.bergen]
    neither = ~Q(memory__icontains="lives") & Q(obtained_at__lt=LATER)
    found = await done(memory.nodes.filter(neither, **story.owner).all())
    assert [m.memory_id for m in found] == [story.runs]


async def test_traverse_along_paths(written: Written, twin: Twin) -> None:
    story = written.story
    user, memory, interaction = (twin.cls(name) for name in ("User", "Memory", "Interaction"))

    through_collection = await done(
        user.nodes.filter(**story.owner).traverse("has_memories__includes").all()
    )
    facade = await written.memora.get_all_user_memories(story.org_id, story.user_id, None)
    assert {row[3].memory_id for row in through_collection} == {m.memory_id for m in facade}
    assert all(isinstance(row[1], twin.cls("MemoryCollection")) for row in through_collection)

    days = await done(memory.nodes.filter(**story.owner).traverse("date_obtained").all())
    assert {m.memory_id: d.date for m, d, _ in days} == {
        story.oslo: DAY.date(),
        story.runs: DAY.date(),
        story.bergen: LATER.date(),
    }
    assert {m.memory_id: m.obtained_at.date() for m in facade} == {
        m.memory_id: d.date for m, d, _ in days
    }

    chain = await done(
        interaction.nodes.filter(interaction_id=story.first_interaction)
        .traverse("first_message__is_next")
        .all()
    )
    assert [(row[1].msg_position, row[3].msg_position) for row in chain] == [(0, 1)]
    superseded = memory.nodes.filter(memory_id=story.oslo).traverse("contrary_update")
    assert [row[1].memory_id for row in await done(superseded.all())] == [story.bergen]


async def test_cypher_query_resolves_objects_to_the_node_and_relationship_classes(
    written: Written, twin: Twin
) -> None:
    story = written.story
    found, _ = await done(
        twin.database.cypher_query(
            "MATCH (n {org_id: $org_id}) RETURN n", {"org_id": story.org_id}, resolve_objects=True
        )
    )
    keyed = {name for name in NODE_NAMES if name != "MessageBlock"}
    assert {type(row[0]) for row in found} == {twin.cls(name) for name in keyed}

    found, _ = await done(
        twin.database.cypher_query(
            "MATCH (old:Memory {org_id: $org_id})-[r:CONTRARY_UPDATE]->(new) "
            "MATCH (old)-[:MESSAGE_SOURCE]->(message) RETURN old, r, new, message",
            {"org_id": story.org_id},
            resolve_objects=True,
        )
    )
    assert [[type(value).__name__ for value in row] for row in found] == [
        ["Memory", "ContraryUpdate", "Memory", "MessageBlock"]
    ]
    old, rel, new, message = found[0]
    assert isinstance(rel, twin.cls("ContraryUpdate")) and isinstance(old, twin.cls("Memory"))
    assert (old.memory_id, new.memory_id, message.content) == (
        story.oslo,
        story.bergen,
        "I live in Oslo",
    )


async def test_an_org_saved_through_the_model_is_found_by_the_facade(
    written: Written, twin: Twin, driver: Driver
) -> None:
    org = await done(twin.cls("Org")(org_name=f"Globex {twin.prefix}").save())
    found = await written.memora.get_organization(org.org_id)
    assert (found.org_name, found.created_at) == (org.org_name, org.created_at)
    stored = rows(driver, "MATCH (o:Org {org_id: $id}) RETURN o.org_name AS name", id=org.org_id)
    assert stored == [{"name": org.org_name}]


async def test_a_user_renamed_through_the_model_resolves_in_the_facades_memory_texts(
    written: Written, twin: Twin, driver: Driver
) -> None:
    memora = written.memora
    world = await make_world(memora, user_name="Ann")
    await save(
        memora,
        world,
        conversation(chat("I like tea"), memories=[(f"user_{world.user_id} likes tea", [0])]),
    )
    user = await done(twin.cls("User").nodes.get(org_id=world.org_id, user_id=world.user_id))
    user.user_name = "Beatrice"
    await done(user.save())

    texts = [m.memory for m in await memora.get_all_user_memories(world.org_id, world.user_id)]
    assert texts == ["Beatrice likes tea"]
    assert (await memora.get_user(world.org_id, world.user_id)).user_name == "Beatrice"
    stored = rows(
        driver, "MATCH (u:User {user_id: $id}) RETURN u.user_name AS name", id=user.user_id
    )
    assert stored == [{"name": "Beatrice"}]


async def test_a_duplicate_key_through_the_model_raises_unique_property(
    written: Written, twin: Twin, driver: Driver
) -> None:
    story = written.story
    with pytest.raises(UniqueProperty):
        await done(twin.cls("User")(user_name="Impostor", **story.owner).save())
    stored = rows(
        driver,
        "MATCH (u:User {org_id: $org_id, user_id: $user_id}) RETURN u.user_name AS name",
        **story.owner,
    )
    assert stored == [{"name": "Ann"}]


async def test_connect_beyond_the_declared_cardinality_raises_neomodels_error(
    written: Written, twin: Twin, driver: Driver
) -> None:
    story = written.story
    user = await done(twin.cls("User").nodes.get(**story.owner))
    elsewhere = await done(twin.cls("Org")(org_name="Elsewhere").save())
    with pytest.raises(AttemptedCardinalityViolation):
        await done(user.belongs_to.connect(elsewhere))
    with pytest.raises(AttemptedCardinalityViolation):  # checked from the other end too
        await done(elsewhere.users.connect(user))
    bergen = await done(twin.cls("Memory").nodes.get(memory_id=story.bergen))
    first_day = await done(twin.cls("Date").nodes.get(date=DAY.date(), **story.owner))
    with pytest.raises(AttemptedCardinalityViolation):
        await done(bergen.date_obtained.connect(first_day))

    orgs = rows(
        driver,
        "MATCH (:User {org_id: $org_id, user_id: $user_id})-[:BELONGS_TO]->(o) "
        "RETURN o.org_id AS org_id",
        **story.owner,
    )
    assert orgs == [{"org_id": story.org_id}]
    days = rows(
        driver,
        "MATCH (:Memory {memory_id: $id})-[:DATE_OBTAINED]->(d) RETURN d.date.day AS day",
        id=story.bergen,
    )
    assert days == [{"day": LATER.day}]
    assert rows(driver, "MATCH (:Org {org_id: $id})--() RETURN 1", id=elsewhere.org_id) == []


async def test_what_memoras_own_data_lacks_reads_as_none(
    written: Written, twin: Twin, driver: Driver
) -> None:
    """A memory without a day (Memora 0.3.0 saves them so after the migration) and a
    user's agent whose user was deleted (Memora's ``delete_user`` keeps the agent)."""
    memora = written.memora
    world = await make_world(memora)
    owner = await memora.create_user(world.org_id, "Owner")
    own_agent = await memora.create_agent(world.org_id, "Own", owner.user_id)
    await memora.delete_user(world.org_id, owner.user_id)
    await save(memora, world, conversation(chat("I ski"), memories=[("skis", [0])]))
    driver.execute_query(
        "MATCH (:Memory {org_id: $org_id, user_id: $user_id})-[r:DATE_OBTAINED]->() DELETE r",
        org_id=world.org_id,
        user_id=world.user_id,
    )

    memory = await done(twin.cls("Memory").nodes.get(org_id=world.org_id, user_id=world.user_id))
    assert await done(memory.date_obtained.single()) is None
    assert (await done(memory.interaction_source.single())).user_id == world.user_id
    agent = await done(twin.cls("Agent").nodes.get(agent_id=own_agent.agent_id))
    assert await done(agent.user.single()) is None
    assert (await done(agent.org.single())).org_id == world.org_id
