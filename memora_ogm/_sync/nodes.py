# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The Memora graph as neomodel node classes.

Labels, relationship types and property names are Memora's own, so a database
written by Memora reads here and the other way round. Each class names its key
(``__node_key__``): ``setup()`` and ``neomodel_install_labels`` install one
uniqueness guarantee per key (see ``memora_ogm._async.schema``).

Relationship attributes are named after the graph: ``user.interactions_in``
follows ``INTERACTIONS_IN``, ``memory.contrary_update`` follows
``CONTRARY_UPDATE`` to the newer memory, and so on.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

import shortuuid
from neomodel import (
    IntegerProperty,
    RelationshipFrom,
    RelationshipTo,
    StringProperty,
    StructuredNode,
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


class Org(MemoraNode):
    __node_key__ = ("unique_org_id", ("org_id",))

    org_id = StringProperty(default=shortuuid.uuid)
    org_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    users = RelationshipFrom("User", "BELONGS_TO")
    has_agent = RelationshipTo("Agent", "HAS_AGENT")


class User(MemoraNode):
    __node_key__ = ("unique_org_user", ("org_id", "user_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(default=shortuuid.uuid)
    user_name = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)

    belongs_to = RelationshipTo(Org, "BELONGS_TO")
    has_agent = RelationshipTo("Agent", "HAS_AGENT")
    interactions_in = RelationshipTo("InteractionCollection", "INTERACTIONS_IN")
    has_memories = RelationshipTo("MemoryCollection", "HAS_MEMORIES")


class Agent(MemoraNode):
    __node_key__ = ("unique_org_agent", ("org_id", "agent_id"))

    org_id = StringProperty(required=True)
    agent_id = StringProperty(default=shortuuid.uuid)
    agent_label = StringProperty(required=True)
    created_at = ZonedDateTimeProperty(default_now=True)
    #: Set only for agents created for one user.
    user_id = StringProperty()

    org = RelationshipFrom(Org, "HAS_AGENT")
    user = RelationshipFrom(User, "HAS_AGENT")


class InteractionCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = RelationshipFrom(User, "INTERACTIONS_IN")
    had_interaction = RelationshipTo("Interaction", "HAD_INTERACTION")


class MemoryCollection(MemoraNode):
    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)

    user = RelationshipFrom(User, "HAS_MEMORIES")
    includes = RelationshipTo("Memory", "INCLUDES")


class Date(MemoraNode):
    """One calendar day of one user; interactions and memories hang off it for paging."""

    __node_key__ = ("unique_user_date", ("org_id", "user_id", "date"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    date = NativeDateProperty(required=True)

    interactions = RelationshipFrom("Interaction", "HAS_OCCURRENCE_ON")
    memories = RelationshipFrom("Memory", "DATE_OBTAINED")


class Interaction(MemoraNode):
    __node_key__ = ("unique_user_interaction", ("org_id", "user_id", "interaction_id"))

    org_id = StringProperty(required=True)
    user_id = StringProperty(required=True)
    agent_id = StringProperty(required=True)
    interaction_id = StringProperty(default=shortuuid.uuid)
    created_at = ZonedDateTimeProperty(default_now=True)
    updated_at = ZonedDateTimeProperty(default_now=True)

    collection = RelationshipFrom(InteractionCollection, "HAD_INTERACTION")
    first_message = RelationshipTo("MessageBlock", "FIRST_MESSAGE")
    has_occurrence_on = RelationshipTo(Date, "HAS_OCCURRENCE_ON")
    memories = RelationshipFrom("Memory", "INTERACTION_SOURCE")


class MessageBlock(MemoraNode):
    """One message of an interaction's chain, at ``msg_position`` (0-based)."""

    msg_position = IntegerProperty(required=True)
    role = StringProperty(required=True)
    content = StringProperty(required=True)

    is_next = RelationshipTo("MessageBlock", "IS_NEXT")
    previous = RelationshipFrom("MessageBlock", "IS_NEXT")
    interaction = RelationshipFrom(Interaction, "FIRST_MESSAGE")
    memories = RelationshipFrom("Memory", "MESSAGE_SOURCE")


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

    collection = RelationshipFrom(MemoryCollection, "INCLUDES")
    interaction_source = RelationshipTo(Interaction, "INTERACTION_SOURCE")
    message_source = RelationshipTo(MessageBlock, "MESSAGE_SOURCE")
    date_obtained = RelationshipTo(Date, "DATE_OBTAINED")
    #: The newer memory that contradicts and supersedes this one.
    contrary_update = RelationshipTo("Memory", "CONTRARY_UPDATE")
    #: The older memories this one superseded.
    contradicts = RelationshipFrom("Memory", "CONTRARY_UPDATE")


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
