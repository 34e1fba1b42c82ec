# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The Memora graph as neomodel node classes.

Labels, relationship types and property names are Memora's own, so a database
written by Memora reads here and the other way round. Each class names its key
(``__node_key__``): ``setup()`` and ``neomodel_install_labels`` install one
uniqueness guarantee per key (see ``memora_ogm._async.schema``).

Relationship attributes are named after the graph: ``user.interactions_in``
follows ``INTERACTIONS_IN``, ``memory.contrary_update`` follows
``CONTRARY_UPDATE`` to the newer memory, and so on. Each relationship type has its
relationship model (``BELONGS_TO`` is :class:`BelongsTo`, ...), empty because Memora's
relationships carry no properties, so that neomodel's ``traverse``,
``relationship()`` and ``resolve_objects`` work on every one of them.

Each attribute states the cardinality every Memora database holds on its side, and
only that: a ``One`` makes neomodel raise on reading a node that lacks the
relationship. What Memora writes in one statement and only deletes together is ``One``
(a user's organisation and collections, an agent's organisation, an interaction's
collection, a memory's collection and interaction). Where Memora's own data differs
from the schema it is relaxed: a memory saved by Memora 0.3.0 after the v0.3.x
migration has no day (SPEC 10.1), so ``date_obtained`` is ``ZeroOrOne``; an
organisation's agent has no user and a user's own agent outlives its user in Memora
(``delete_user`` leaves it), so ``Agent.user`` is ``ZeroOrOne``; an interaction
imported with no ``dates`` has no day, so ``has_occurrence_on`` is ``ZeroOrMore``; a
memory can be superseded twice (SPEC 10.18) and an import may let one memory supersede
two, so ``CONTRARY_UPDATE`` is ``ZeroOrMore`` both ways. A chain has no forks (SPEC
3): at most one first message, one next and one previous message (only Memora's racing
updates, SPEC 10.12, could fork one, and reading the fork then raises neomodel's
``CardinalityViolation``).

neomodel checks these on model-level writes (``connect()`` through the classes, one
read before the write); the facade's compiled statements never go through them, their
shape already keeps them.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

import shortuuid
from neomodel import (
    IntegerProperty,
    One,
    RelationshipFrom,
    RelationshipTo,
    StringProperty,
    StructuredNode,
    StructuredRel,
    ZeroOrMore,
    ZeroOrOne,
)

from memora_ogm.properties import NativeDateProperty, ZonedDateTimeProperty


def new_memory_id() -> str:
    """Memory ids are uuid4 strings, as Memora's (and valid Qdrant point ids)."""
    return str(uuid.uuid4())


class MemoraNode(StructuredNode):
    """Common base: every keyed node names its uniqueness constraint and key properties."""

    __abstract_node__ = True
    #: (constraint name, key properties); the names are the ones Memora's setup() uses.
    __node_key__: ClassVar[tuple[str, tuple[str, ...]] | None] = None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a node as ``Label(property=value, ...)`` (``memora_ogm.pretty``)."""
        from memora_ogm.pretty import node_line

        printer.text(node_line(self))


class BelongsTo(StructuredRel):
    """``(User)-[:BELONGS_TO]->(Org)``: membership."""


class HasAgent(StructuredRel):
    """``(Org)-[:HAS_AGENT]->(Agent)``, and ``(User)-[:HAS_AGENT]->(Agent)`` for an
    agent of one user."""


class InteractionsIn(StructuredRel):
    """``(User)-[:INTERACTIONS_IN]->(InteractionCollection)``."""


class HadInteraction(StructuredRel):
    """``(InteractionCollection)-[:HAD_INTERACTION]->(Interaction)``."""


class HasMemories(StructuredRel):
    """``(User)-[:HAS_MEMORIES]->(MemoryCollection)``."""


class Includes(StructuredRel):
    """``(MemoryCollection)-[:INCLUDES]->(Memory)``."""


class FirstMessage(StructuredRel):
    """``(Interaction)-[:FIRST_MESSAGE]->(MessageBlock)``: the message at position 0."""


class IsNext(StructuredRel):
    """``(MessageBlock)-[:IS_NEXT]->(MessageBlock)``: the message one position later."""


class HasOccurrenceOn(StructuredRel):
    """``(Interaction)-[:HAS_OCCURRENCE_ON]->(Date)``: a day it was saved or updated on."""


class InteractionSource(StructuredRel):
    """``(Memory)-[:INTERACTION_SOURCE]->(Interaction)``: where the memory came from."""


class MessageSource(StructuredRel):
    """``(Memory)-[:MESSAGE_SOURCE]->(MessageBlock)``: a message that triggered it."""


class DateObtained(StructuredRel):
    """``(Memory)-[:DATE_OBTAINED]->(Date)``: the day it was obtained."""


class ContraryUpdate(StructuredRel):
    """``(old:Memory)-[:CONTRARY_UPDATE]->(new:Memory)``: ``new`` supersedes ``old``."""


class Org(MemoraNode):
    __node_key__ = ("unique_org_id", ("org_id",))

    org_id = StringProperty(default=shortuuid.uuid)
    org_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    users = RelationshipFrom("User", "BELONGS_TO", ZeroOrMore, BelongsTo)
    has_agent = RelationshipTo("Agent", "HAS_AGENT", ZeroOrMore, HasAgent)


class User(MemoraNode):
    __node_key__ = ("unique_org_user", ("org_id", "user_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(default=shortuuid.uuid)
    user_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    belongs_to = RelationshipTo(Org, "BELONGS_TO", One, BelongsTo)
    has_agent = RelationshipTo("Agent", "HAS_AGENT", ZeroOrMore, HasAgent)
    interactions_in = RelationshipTo(
        "InteractionCollection", "INTERACTIONS_IN", cardinality=One, model=InteractionsIn
    )
    has_memories = RelationshipTo("MemoryCollection", "HAS_MEMORIES", One, HasMemories)


class Agent(MemoraNode):
    __node_key__ = ("unique_org_agent", ("org_id", "agent_id"))

    org_id = StringProperty(required=True)
    agent_id = StringProperty(default=shortuuid.uuid)
    agent_label = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)
    #: Set only for agents created for one user.
    user_id = StringProperty()

    org = RelationshipFrom(Org, "HAS_AGENT", One, HasAgent)
    user = RelationshipFrom(User, "HAS_AGENT", ZeroOrOne, HasAgent)


class InteractionCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = RelationshipFrom(User, "INTERACTIONS_IN", One, InteractionsIn)
    had_interaction = RelationshipTo(
        "Interaction", "HAD_INTERACTION", cardinality=ZeroOrMore, model=HadInteraction
    )


class MemoryCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = RelationshipFrom(User, "HAS_MEMORIES", One, HasMemories)
    includes = RelationshipTo("Memory", "INCLUDES", ZeroOrMore, Includes)


class Date(MemoraNode):
    """One calendar day of one user; interactions and memories hang off it for paging."""

    __node_key__ = ("unique_user_date", ("org_id", "user_id", "date"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    date = NativeDateProperty(required=True)

    interactions = RelationshipFrom(
        "Interaction", "HAS_OCCURRENCE_ON", cardinality=ZeroOrMore, model=HasOccurrenceOn
    )
    memories = RelationshipFrom("Memory", "DATE_OBTAINED", ZeroOrMore, DateObtained)


class Interaction(MemoraNode):
    __node_key__ = ("unique_user_interaction", ("org_id", "user_id", "interaction_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    agent_id = StringProperty(required=True)
    interaction_id = StringProperty(default=shortuuid.uuid)
    created_at = ZonedDateTimeProperty(default_now=True)
    updated_at = ZonedDateTimeProperty(default_now=True)

    collection = RelationshipFrom(
        InteractionCollection, "HAD_INTERACTION", cardinality=One, model=HadInteraction
    )
    first_message = RelationshipTo(
        "MessageBlock", "FIRST_MESSAGE", cardinality=ZeroOrOne, model=FirstMessage
    )
    has_occurrence_on = RelationshipTo(
        Date, "HAS_OCCURRENCE_ON", cardinality=ZeroOrMore, model=HasOccurrenceOn
    )
    memories = RelationshipFrom(
        "Memory", "INTERACTION_SOURCE", cardinality=ZeroOrMore, model=InteractionSource
    )


class MessageBlock(MemoraNode):
    """One message of an interaction's chain, at ``msg_position`` (0-based)."""

    msg_position = IntegerProperty(required=True)
    role = StringProperty(required=True)
    content = StringProperty(required=True)

    is_next = RelationshipTo("MessageBlock", "IS_NEXT", ZeroOrOne, IsNext)
    previous = RelationshipFrom("MessageBlock", "IS_NEXT", ZeroOrOne, IsNext)
    interaction = RelationshipFrom(Interaction, "FIRST_MESSAGE", ZeroOrOne, FirstMessage)
    memories = RelationshipFrom("Memory", "MESSAGE_SOURCE", ZeroOrMore, MessageSource)


class Memory(MemoraNode):
    """A memory, stored with ``user_<id>``/``agent_<id>`` placeholders in its text."""

    __node_key__ = ("unique_user_memory", ("org_id", "user_id", "memory_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    agent_id = StringProperty(required=True)
    interaction_id = StringProperty(required=True)
    memory_id = StringProperty(default=new_memory_id)
    memory = StringProperty(required=True)
    obtained_at = ZonedDateTimeProperty(default_now=True)

    collection = RelationshipFrom(MemoryCollection, "INCLUDES", One, Includes)
    interaction_source = RelationshipTo(
        Interaction, "INTERACTION_SOURCE", cardinality=One, model=InteractionSource
    )
    message_source = RelationshipTo(
        MessageBlock, "MESSAGE_SOURCE", cardinality=ZeroOrMore, model=MessageSource
    )
    date_obtained = RelationshipTo(Date, "DATE_OBTAINED", ZeroOrOne, DateObtained)
    #: The newer memory that contradicts and supersedes this one.
    contrary_update = RelationshipTo(
        "Memory", "CONTRARY_UPDATE", cardinality=ZeroOrMore, model=ContraryUpdate
    )
    #: The older memories this one superseded.
    contradicts = RelationshipFrom(
        "Memory", "CONTRARY_UPDATE", cardinality=ZeroOrMore, model=ContraryUpdate
    )


NODE_CLASSES: tuple[type[MemoraNode], ...] = (
    Org,
    User,
    Agent,
    InteractionCollection,
    MemoryCollection,
    Date,
    Interaction,
    MessageBlock,
    Memory,
)


REL_CLASSES: tuple[type[StructuredRel], ...] = (
    BelongsTo,
    HasAgent,
    InteractionsIn,
    HadInteraction,
    HasMemories,
    Includes,
    FirstMessage,
    IsNext,
    HasOccurrenceOn,
    InteractionSource,
    MessageSource,
    DateObtained,
    ContraryUpdate,
)
"""One relationship model per relationship type of the Memora graph."""
