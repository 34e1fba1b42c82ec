"""The Memora graph as neomodel node classes (the async twin): see :mod:`memora_ogm.nodes`."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import shortuuid
from neomodel import (
    AsyncOne,
    AsyncRelationshipFrom,
    AsyncRelationshipTo,
    AsyncStructuredNode,
    AsyncStructuredRel,
    AsyncZeroOrOne,
    IntegerProperty,
    StringProperty,
)

from memora_ogm.engine.nodes import Nodes, new_memory_id
from memora_ogm.properties import NativeDateProperty, ZonedDateTimeProperty
from memora_ogm.schema.models import node_line


class MemoraNode(AsyncStructuredNode):
    """Common base: every keyed node names its uniqueness constraint and key properties."""

    __abstract_node__ = True
    #: (constraint name, key properties); the names are the ones Memora's setup() uses.
    __node_key__: ClassVar[tuple[str, tuple[str, ...]] | None] = None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a node as ``Label(property=value, ...)``."""
        printer.text(node_line(self))


class BelongsTo(AsyncStructuredRel):
    """``(User)-[:BELONGS_TO]->(Org)``: membership."""


class HasAgent(AsyncStructuredRel):
    """``(Org)-[:HAS_AGENT]->(Agent)``, and ``(User)-[:HAS_AGENT]->(Agent)`` for an
    agent of one user."""


class InteractionsIn(AsyncStructuredRel):
    """``(User)-[:INTERACTIONS_IN]->(InteractionCollection)``."""


class HadInteraction(AsyncStructuredRel):
    """``(InteractionCollection)-[:HAD_INTERACTION]->(Interaction)``."""


class HasMemories(AsyncStructuredRel):
    """``(User)-[:HAS_MEMORIES]->(MemoryCollection)``."""


class Includes(AsyncStructuredRel):
    """``(MemoryCollection)-[:INCLUDES]->(Memory)``."""


class FirstMessage(AsyncStructuredRel):
    """``(Interaction)-[:FIRST_MESSAGE]->(MessageBlock)``: the message at position 0."""


class IsNext(AsyncStructuredRel):
    """``(MessageBlock)-[:IS_NEXT]->(MessageBlock)``: the message one position later."""


class HasOccurrenceOn(AsyncStructuredRel):
    """``(Interaction)-[:HAS_OCCURRENCE_ON]->(Date)``: a day it was saved or updated on."""


class InteractionSource(AsyncStructuredRel):
    """``(Memory)-[:INTERACTION_SOURCE]->(Interaction)``: where the memory came from."""


class MessageSource(AsyncStructuredRel):
    """``(Memory)-[:MESSAGE_SOURCE]->(MessageBlock)``: a message that triggered it."""


class DateObtained(AsyncStructuredRel):
    """``(Memory)-[:DATE_OBTAINED]->(Date)``: the day it was obtained."""


class ContraryUpdate(AsyncStructuredRel):
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

    users = AsyncRelationshipFrom(later("User"), "BELONGS_TO", model=BelongsTo)
    has_agent = AsyncRelationshipTo(later("Agent"), "HAS_AGENT", model=HasAgent)


class User(MemoraNode):
    __node_key__ = ("unique_org_user", ("org_id", "user_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(default=shortuuid.uuid)
    user_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    belongs_to = AsyncRelationshipTo(Org, "BELONGS_TO", AsyncOne, BelongsTo)
    has_agent = AsyncRelationshipTo(later("Agent"), "HAS_AGENT", model=HasAgent)
    interactions_in = AsyncRelationshipTo(
        later("InteractionCollection"), "INTERACTIONS_IN", AsyncOne, InteractionsIn
    )
    has_memories = AsyncRelationshipTo(
        later("MemoryCollection"), "HAS_MEMORIES", AsyncOne, HasMemories
    )


class Agent(MemoraNode):
    __node_key__ = ("unique_org_agent", ("org_id", "agent_id"))

    org_id = StringProperty(required=True)
    agent_id = StringProperty(default=shortuuid.uuid)
    agent_label = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)
    #: Set only for agents created for one user.
    user_id = StringProperty()

    org = AsyncRelationshipFrom(Org, "HAS_AGENT", AsyncOne, HasAgent)
    user = AsyncRelationshipFrom(User, "HAS_AGENT", AsyncZeroOrOne, HasAgent)


class InteractionCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = AsyncRelationshipFrom(User, "INTERACTIONS_IN", AsyncOne, InteractionsIn)
    had_interaction = AsyncRelationshipTo(
        later("Interaction"), "HAD_INTERACTION", model=HadInteraction
    )


class MemoryCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = AsyncRelationshipFrom(User, "HAS_MEMORIES", AsyncOne, HasMemories)
    includes = AsyncRelationshipTo(later("Memory"), "INCLUDES", model=Includes)


class Date(MemoraNode):
    """One calendar day of one user; interactions and memories hang off it for paging."""

    __node_key__ = ("unique_user_date", ("org_id", "user_id", "date"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    date = NativeDateProperty(required=True)

    interactions = AsyncRelationshipFrom(
        later("Interaction"), "HAS_OCCURRENCE_ON", model=HasOccurrenceOn
    )
    memories = AsyncRelationshipFrom(later("Memory"), "DATE_OBTAINED", model=DateObtained)


class Interaction(MemoraNode):
    __node_key__ = ("unique_user_interaction", ("org_id", "user_id", "interaction_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    agent_id = StringProperty(required=True)
    interaction_id = StringProperty(default=shortuuid.uuid)
    created_at = ZonedDateTimeProperty(default_now=True)
    updated_at = ZonedDateTimeProperty(default_now=True)

    collection = AsyncRelationshipFrom(
        InteractionCollection, "HAD_INTERACTION", AsyncOne, HadInteraction
    )
    first_message = AsyncRelationshipTo(
        later("MessageBlock"), "FIRST_MESSAGE", AsyncZeroOrOne, FirstMessage
    )
    has_occurrence_on = AsyncRelationshipTo(Date, "HAS_OCCURRENCE_ON", model=HasOccurrenceOn)
    memories = AsyncRelationshipFrom(later("Memory"), "INTERACTION_SOURCE", model=InteractionSource)


class MessageBlock(MemoraNode):
    """One message of an interaction's chain, at ``msg_position`` (0-based)."""

    msg_position = IntegerProperty(required=True)
    role = StringProperty(required=True)
    content = StringProperty(required=True)

    is_next = AsyncRelationshipTo(later("MessageBlock"), "IS_NEXT", AsyncZeroOrOne, IsNext)
    previous = AsyncRelationshipFrom(later("MessageBlock"), "IS_NEXT", AsyncZeroOrOne, IsNext)
    interaction = AsyncRelationshipFrom(Interaction, "FIRST_MESSAGE", AsyncZeroOrOne, FirstMessage)
    memories = AsyncRelationshipFrom(later("Memory"), "MESSAGE_SOURCE", model=MessageSource)


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

    collection = AsyncRelationshipFrom(MemoryCollection, "INCLUDES", AsyncOne, Includes)
    interaction_source = AsyncRelationshipTo(
        Interaction, "INTERACTION_SOURCE", AsyncOne, InteractionSource
    )
    message_source = AsyncRelationshipTo(MessageBlock, "MESSAGE_SOURCE", model=MessageSource)
    date_obtained = AsyncRelationshipTo(Date, "DATE_OBTAINED", AsyncZeroOrOne, DateObtained)
    #: The newer memory that contradicts and supersedes this one.
    contrary_update = AsyncRelationshipTo(later("Memory"), "CONTRARY_UPDATE", model=ContraryUpdate)
    #: The older memories this one superseded.
    contradicts = AsyncRelationshipFrom(later("Memory"), "CONTRARY_UPDATE", model=ContraryUpdate)


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


REL_CLASSES: tuple[type[AsyncStructuredRel], ...] = (
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
