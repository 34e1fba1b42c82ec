"""The Memora graph's node classes, for the neomodel CLI, Django/Flask apps and the shell.

    neomodel_install_labels memora_ogm.nodes --db bolt://neo4j:password@localhost:7687

installs one uniqueness guarantee per node key (composite ``IS UNIQUE`` on
Community Edition, ``NODE KEY`` on Enterprise), the same constraints, by name, as
``Neo4jGraphInterface.setup()``. These are neomodel's synchronous classes
(``StructuredNode``); the async facade uses their twins in
``memora_ogm._async.nodes``, from which these are generated.
"""

from memora_ogm._sync.nodes import (
    NODE_CLASSES,
    Agent,
    Date,
    Interaction,
    InteractionCollection,
    MemoraNode,
    Memory,
    MemoryCollection,
    MessageBlock,
    Org,
    User,
)
from memora_ogm._sync.schema import extend_neomodel_schema

extend_neomodel_schema()

__all__ = [
    "NODE_CLASSES",
    "Agent",
    "Date",
    "Interaction",
    "InteractionCollection",
    "MemoraNode",
    "Memory",
    "MemoryCollection",
    "MessageBlock",
    "Org",
    "User",
]
