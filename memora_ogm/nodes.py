"""The Memora graph's node and relationship classes, both twins, for the neomodel CLI,
Django, Flask and FastAPI apps and the shell.

    neomodel_install_labels memora_ogm.nodes --db bolt://neo4j:password@localhost:7687

installs one uniqueness guarantee per node key (composite ``IS UNIQUE`` on
Community Edition, ``NODE KEY`` on Enterprise), the same constraints, by name, as
``Neo4jGraphInterface.setup()``.

As in neomodel itself (``StructuredNode`` and ``AsyncStructuredNode``), the plain
names are the synchronous classes (``Memory``, ``BelongsTo``, on ``neomodel.db``)
and ``Async``-prefixed ones their async twins (``AsyncMemory``, ``AsyncBelongsTo``,
on ``neomodel.adb``), which the async facade uses. The async classes are defined in
``memora_ogm._async.nodes`` and the sync ones generated from them
(``memora_ogm._sync.nodes``); both keep their Memora names (a class's name is its
label), so ``AsyncMemory.__name__`` is ``"Memory"``.
"""

from memora_ogm._async.nodes import NODE_CLASSES as ASYNC_NODE_CLASSES
from memora_ogm._async.nodes import REL_CLASSES as ASYNC_REL_CLASSES
from memora_ogm._async.nodes import Agent as AsyncAgent
from memora_ogm._async.nodes import BelongsTo as AsyncBelongsTo
from memora_ogm._async.nodes import ContraryUpdate as AsyncContraryUpdate
from memora_ogm._async.nodes import Date as AsyncDate
from memora_ogm._async.nodes import DateObtained as AsyncDateObtained
from memora_ogm._async.nodes import FirstMessage as AsyncFirstMessage
from memora_ogm._async.nodes import HadInteraction as AsyncHadInteraction
from memora_ogm._async.nodes import HasAgent as AsyncHasAgent
from memora_ogm._async.nodes import HasMemories as AsyncHasMemories
from memora_ogm._async.nodes import HasOccurrenceOn as AsyncHasOccurrenceOn
from memora_ogm._async.nodes import Includes as AsyncIncludes
from memora_ogm._async.nodes import Interaction as AsyncInteraction
from memora_ogm._async.nodes import InteractionCollection as AsyncInteractionCollection
from memora_ogm._async.nodes import InteractionsIn as AsyncInteractionsIn
from memora_ogm._async.nodes import InteractionSource as AsyncInteractionSource
from memora_ogm._async.nodes import IsNext as AsyncIsNext
from memora_ogm._async.nodes import MemoraNode as AsyncMemoraNode
from memora_ogm._async.nodes import Memory as AsyncMemory
from memora_ogm._async.nodes import MemoryCollection as AsyncMemoryCollection
from memora_ogm._async.nodes import MessageBlock as AsyncMessageBlock
from memora_ogm._async.nodes import MessageSource as AsyncMessageSource
from memora_ogm._async.nodes import Org as AsyncOrg
from memora_ogm._async.nodes import User as AsyncUser
from memora_ogm._async.schema import extend_neomodel_schema as extend_async_neomodel_schema
from memora_ogm._sync.nodes import (
    NODE_CLASSES,
    REL_CLASSES,
    Agent,
    BelongsTo,
    ContraryUpdate,
    Date,
    DateObtained,
    FirstMessage,
    HadInteraction,
    HasAgent,
    HasMemories,
    HasOccurrenceOn,
    Includes,
    Interaction,
    InteractionCollection,
    InteractionsIn,
    InteractionSource,
    IsNext,
    MemoraNode,
    Memory,
    MemoryCollection,
    MessageBlock,
    MessageSource,
    Org,
    User,
)
from memora_ogm._sync.schema import extend_neomodel_schema

# Both twins of neomodel's install_labels install the node keys too.
extend_neomodel_schema()
extend_async_neomodel_schema()

__all__ = [
    "ASYNC_NODE_CLASSES",
    "ASYNC_REL_CLASSES",
    "Agent",
    "AsyncAgent",
    "AsyncBelongsTo",
    "AsyncContraryUpdate",
    "AsyncDate",
    "AsyncDateObtained",
    "AsyncFirstMessage",
    "AsyncHadInteraction",
    "AsyncHasAgent",
    "AsyncHasMemories",
    "AsyncHasOccurrenceOn",
    "AsyncIncludes",
    "AsyncInteraction",
    "AsyncInteractionCollection",
    "AsyncInteractionSource",
    "AsyncInteractionsIn",
    "AsyncIsNext",
    "AsyncMemoraNode",
    "AsyncMemory",
    "AsyncMemoryCollection",
    "AsyncMessageBlock",
    "AsyncMessageSource",
    "AsyncOrg",
    "AsyncUser",
    "BelongsTo",
    "ContraryUpdate",
    "Date",
    "DateObtained",
    "FirstMessage",
    "HadInteraction",
    "HasAgent",
    "HasMemories",
    "HasOccurrenceOn",
    "Includes",
    "Interaction",
    "InteractionCollection",
    "InteractionSource",
    "InteractionsIn",
    "IsNext",
    "MemoraNode",
    "Memory",
    "MemoryCollection",
    "MessageBlock",
    "MessageSource",
    "NODE_CLASSES",
    "Org",
    "REL_CLASSES",
    "User",
]
