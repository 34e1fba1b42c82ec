# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The Memora graph as neomodel node classes (the async twin): see :mod:`memora_ogm.nodes`."""

from __future__ import annotations

import sys
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
    ZeroOrOne,
)

from memora_ogm.engine.nodes import Nodes, new_memory_id
from memora_ogm.properties import NativeDateProperty, ZonedDateTimeProperty
from memora_ogm.schema.models import node_line


class MemoraNode(StructuredNode):
    """Common base: every keyed node names its uniqueness constraint and key properties."""

    __abstract_node__ = True
    #: (constraint name, key properties); the names are the ones Memora's setup() uses.
    __node_key__: ClassVar[tuple[str, tuple[str, ...]] | None] = None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a node as ``Label(property=value, ...)``."""
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


def later(name: str) -> str:
    """A class further down this module, named so that neomodel looks it up here: a bare
    name is looked up in the first module up the import stack whose globals hold it,
    which can be the importer's (a Django module holding its own ``User``)."""
    return f"{__name__}.{name}"


class Org(MemoraNode):
    __node_key__ = ("unique_org_id", ("org_id",))

    org_id = StringProperty(default=shortuuid.uuid)
    org_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    users = RelationshipFrom(later("User"), "BELONGS_TO", model=BelongsTo)
    has_agent = RelationshipTo(later("Agent"), "HAS_AGENT", model=HasAgent)


class User(MemoraNode):
    __node_key__ = ("unique_org_user", ("org_id", "user_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(default=shortuuid.uuid)
    user_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    belongs_to = RelationshipTo(Org, "BELONGS_TO", One, BelongsTo)
    has_agent = RelationshipTo(later("Agent"), "HAS_AGENT", model=HasAgent)
    interactions_in = RelationshipTo(
        later("InteractionCollection"), "INTERACTIONS_IN", One, InteractionsIn
    )
    has_memories = RelationshipTo(later("MemoryCollection"), "HAS_MEMORIES", One, HasMemories)


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
    had_interaction = RelationshipTo(later("Interaction"), "HAD_INTERACTION", model=HadInteraction)


class MemoryCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = RelationshipFrom(User, "HAS_MEMORIES", One, HasMemories)
    includes = RelationshipTo(later("Memory"), "INCLUDES", model=Includes)


class Date(MemoraNode):
    """One calendar day of one user; interactions and memories hang off it for paging."""

    __node_key__ = ("unique_user_date", ("org_id", "user_id", "date"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    date = NativeDateProperty(required=True)

    interactions = RelationshipFrom(
        later("Interaction"), "HAS_OCCURRENCE_ON", model=HasOccurrenceOn
    )
    memories = RelationshipFrom(later("Memory"), "DATE_OBTAINED", model=DateObtained)


class Interaction(MemoraNode):
    __node_key__ = ("unique_user_interaction", ("org_id", "user_id", "interaction_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    agent_id = StringProperty(required=True)
    interaction_id = StringProperty(default=shortuuid.uuid)
    created_at = ZonedDateTimeProperty(default_now=True)
    updated_at = ZonedDateTimeProperty(default_now=True)

    collection = RelationshipFrom(InteractionCollection, "HAD_INTERACTION", One, HadInteraction)
    first_message = RelationshipTo(later("MessageBlock"), "FIRST_MESSAGE", ZeroOrOne, FirstMessage)
    has_occurrence_on = RelationshipTo(Date, "HAS_OCCURRENCE_ON", model=HasOccurrenceOn)
    memories = RelationshipFrom(later("Memory"), "INTERACTION_SOURCE", model=InteractionSource)


class MessageBlock(MemoraNode):
    """One message of an interaction's chain, at ``msg_position`` (0-based)."""

    msg_position = IntegerProperty(required=True)
    role = StringProperty(required=True)
    content = StringProperty(required=True)

    is_next = RelationshipTo(later("MessageBlock"), "IS_NEXT", ZeroOrOne, IsNext)
    previous = RelationshipFrom(later("MessageBlock"), "IS_NEXT", ZeroOrOne, IsNext)
    interaction = RelationshipFrom(Interaction, "FIRST_MESSAGE", ZeroOrOne, FirstMessage)
    memories = RelationshipFrom(later("Memory"), "MESSAGE_SOURCE", model=MessageSource)


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
    interaction_source = RelationshipTo(Interaction, "INTERACTION_SOURCE", One, InteractionSource)
    message_source = RelationshipTo(MessageBlock, "MESSAGE_SOURCE", model=MessageSource)
    date_obtained = RelationshipTo(Date, "DATE_OBTAINED", ZeroOrOne, DateObtained)
    #: The newer memory that contradicts and supersedes this one.
    contrary_update = RelationshipTo(later("Memory"), "CONTRARY_UPDATE", model=ContraryUpdate)
    #: The older memories this one superseded.
    contradicts = RelationshipFrom(later("Memory"), "CONTRARY_UPDATE", model=ContraryUpdate)


class AppliedMigration(MemoraNode):
    """A migration applied to this database (``memora_ogm.migrations``); not a class of
    the Memora graph."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


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

#: What this twin's facade hands every declaration.
NODES = Nodes.of(sys.modules[__name__])
