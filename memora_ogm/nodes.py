"""The Memora graph's node and relationship classes, both twins, for the neomodel CLI,
Django, Flask and FastAPI apps and the shell.

    neomodel_install_labels memora_ogm.nodes --db bolt://neo4j:password@localhost:7687

installs each class's ``__node_key__`` (``IS UNIQUE`` on Community, ``NODE KEY`` on
Enterprise), the constraints ``Neo4jGraphInterface.setup()`` installs, by name.

As in neomodel, plain names are the sync classes (on ``neomodel.db``) and ``Async``
ones their twins (on ``neomodel.adb``), which keep Memora's names: a class's name is its
label, so ``AsyncMemory.__name__`` is ``"Memory"``. Labels, relationship types and
properties are Memora's, so each reads the other's databases. Attributes follow the graph
(``memory.contrary_update`` to the newer memory); each relationship type has an empty
model (:class:`BelongsTo`, ...) so neomodel's ``traverse`` and ``resolve_objects`` work.

Each attribute states the cardinality every Memora database holds (``ZeroOrMore`` where it
names none): ``One`` makes neomodel raise on a node lacking it, so only what Memora writes
in one statement and deletes together is ``One``. Relaxed where Memora's data differs:
``date_obtained`` (a 0.3.0 memory after the v0.3.x migration has no day, SPEC 10.1),
``Agent.user`` (an organisation's agent has none; a user's outlives it),
``has_occurrence_on`` (an import without ``dates``), ``CONTRARY_UPDATE`` both ways (SPEC
10.18, imports). A chain has at most one first, next and previous message (SPEC 3; a fork
from Memora's racing updates, SPEC 10.12, raises ``CardinalityViolation`` when read).
neomodel checks these on model-level writes only; the facade's statements keep them by shape.
"""

from memora_ogm._async import nodes as _async
from memora_ogm._async.schema import extend_neomodel_schema as extend_async_neomodel_schema
from memora_ogm._sync.nodes import NODE_CLASSES as NODE_CLASSES
from memora_ogm._sync.nodes import REL_CLASSES as REL_CLASSES
from memora_ogm._sync.nodes import Agent as Agent
from memora_ogm._sync.nodes import BelongsTo as BelongsTo
from memora_ogm._sync.nodes import ContraryUpdate as ContraryUpdate
from memora_ogm._sync.nodes import Date as Date
from memora_ogm._sync.nodes import DateObtained as DateObtained
from memora_ogm._sync.nodes import FirstMessage as FirstMessage
from memora_ogm._sync.nodes import HadInteraction as HadInteraction
from memora_ogm._sync.nodes import HasAgent as HasAgent
from memora_ogm._sync.nodes import HasMemories as HasMemories
from memora_ogm._sync.nodes import HasOccurrenceOn as HasOccurrenceOn
from memora_ogm._sync.nodes import Includes as Includes
from memora_ogm._sync.nodes import Interaction as Interaction
from memora_ogm._sync.nodes import InteractionCollection as InteractionCollection
from memora_ogm._sync.nodes import InteractionsIn as InteractionsIn
from memora_ogm._sync.nodes import InteractionSource as InteractionSource
from memora_ogm._sync.nodes import IsNext as IsNext
from memora_ogm._sync.nodes import MemoraNode as MemoraNode
from memora_ogm._sync.nodes import Memory as Memory
from memora_ogm._sync.nodes import MemoryCollection as MemoryCollection
from memora_ogm._sync.nodes import MessageBlock as MessageBlock
from memora_ogm._sync.nodes import MessageSource as MessageSource
from memora_ogm._sync.nodes import Org as Org
from memora_ogm._sync.nodes import User as User
from memora_ogm._sync.schema import extend_neomodel_schema

# Both twins of neomodel's install_labels install the node keys too.
extend_neomodel_schema()
extend_async_neomodel_schema()

ASYNC_NODE_CLASSES = _async.NODE_CLASSES
ASYNC_REL_CLASSES = _async.REL_CLASSES
AsyncAgent = _async.Agent
AsyncBelongsTo = _async.BelongsTo
AsyncContraryUpdate = _async.ContraryUpdate
AsyncDate = _async.Date
AsyncDateObtained = _async.DateObtained
AsyncFirstMessage = _async.FirstMessage
AsyncHadInteraction = _async.HadInteraction
AsyncHasAgent = _async.HasAgent
AsyncHasMemories = _async.HasMemories
AsyncHasOccurrenceOn = _async.HasOccurrenceOn
AsyncIncludes = _async.Includes
AsyncInteraction = _async.Interaction
AsyncInteractionCollection = _async.InteractionCollection
AsyncInteractionsIn = _async.InteractionsIn
AsyncInteractionSource = _async.InteractionSource
AsyncIsNext = _async.IsNext
AsyncMemoraNode = _async.MemoraNode
AsyncMemory = _async.Memory
AsyncMemoryCollection = _async.MemoryCollection
AsyncMessageBlock = _async.MessageBlock
AsyncMessageSource = _async.MessageSource
AsyncOrg = _async.Org
AsyncUser = _async.User
