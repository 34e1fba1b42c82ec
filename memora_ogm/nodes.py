"""The Memora graph's node and relationship classes, both twins, for the neomodel CLI,
Django, Flask and FastAPI apps and the shell.

    neomodel_install_labels memora_ogm.nodes --db bolt://neo4j:password@localhost:7687

installs one uniqueness guarantee per class's key (``__node_key__``; composite
``IS UNIQUE`` on Community Edition, ``NODE KEY`` on Enterprise), the same constraints, by
name, as ``Neo4jGraphInterface.setup()`` (see ``memora_ogm._async.schema``).

As in neomodel itself (``StructuredNode`` and ``AsyncStructuredNode``), the plain names
are the synchronous classes (``Memory``, ``BelongsTo``, on ``neomodel.db``) and
``Async``-prefixed ones their async twins (``AsyncMemory``, on ``neomodel.adb``), which
the async facade uses. The async classes are defined in ``memora_ogm._async.nodes`` and
the sync ones generated from them; both keep their Memora names (a class's name is its
label), so ``AsyncMemory.__name__`` is ``"Memory"``.

Labels, relationship types and property names are Memora's own, so a database written
by Memora reads here and the other way round. Relationship attributes are named after the
graph: ``user.interactions_in`` follows ``INTERACTIONS_IN``, ``memory.contrary_update``
follows ``CONTRARY_UPDATE`` to the newer memory, and so on. Each relationship type has
its relationship model (``BELONGS_TO`` is :class:`BelongsTo`, ...), empty because
Memora's relationships carry no properties, so that neomodel's ``traverse``,
``relationship()`` and ``resolve_objects`` work on every one of them.

Each attribute states the cardinality every Memora database holds on its side, and only
that (neomodel's default, ``ZeroOrMore``, where it names none): a ``One`` makes neomodel
raise on reading a node that lacks the relationship. What Memora writes in one statement
and only deletes together is ``One`` (a user's organisation and collections, an agent's
organisation, an interaction's collection, a memory's collection and interaction). Where
Memora's own data differs from the schema it is relaxed: a memory saved by Memora 0.3.0
after the v0.3.x migration has no day (SPEC 10.1), so ``date_obtained`` is ``ZeroOrOne``;
an organisation's agent has no user and a user's own agent outlives its user in Memora
(``delete_user`` leaves it), so ``Agent.user`` is ``ZeroOrOne``; an interaction imported
with no ``dates`` has no day, so ``has_occurrence_on`` is ``ZeroOrMore``; a memory can be
superseded twice (SPEC 10.18) and an import may let one memory supersede two, so
``CONTRARY_UPDATE`` is ``ZeroOrMore`` both ways. A chain has no forks (SPEC 3): at most
one first message, one next and one previous message (only Memora's racing updates, SPEC
10.12, could fork one, and reading the fork then raises neomodel's
``CardinalityViolation``).

neomodel checks these on model-level writes (``connect()`` through the classes, one
read before the write); the facade's compiled statements never go through them, their
shape already keeps them.
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
