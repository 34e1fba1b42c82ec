"""A process killed with SIGKILL between a write's vector half and its commit (issue 40).

Run as ``python killed_writer.py STORE ACTION ORG AGENT USER [MEMORY]`` with the
``NEO4J_*`` variables set: it opens the sync facade on the embedded store in ``STORE``,
and performs ACTION (``save`` or ``delete_memory``) with the commit replaced by the
process killing itself, so the vector half is applied and the graph never commits.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from interaction_helpers import LATER, chat, conversation

from memora_ogm import sync
from memora_ogm.vector_db.embedding import HashingEmbedding


def die(transaction: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(store: str, action: str, org: str, agent: str, user: str, *memory: str) -> None:
    env = os.environ
    vectors = sync.QdrantDB(path=store, embedding_function=HashingEmbedding())
    memora = sync.Neo4jGraphInterface(
        env["NEO4J_URI"],
        env["NEO4J_USERNAME"],
        env["NEO4J_PASSWORD"],
        env["NEO4J_DATABASE"],
        vectors,
    )
    memora.graph.commit = die  # type: ignore[method-assign]
    if action == "save":
        data = conversation(chat("I moved to Bergen"), when=LATER, memories=[("bergen", [0])])
        memora.save_interaction_with_memories(org, agent, user, data)
    else:
        memora.delete_user_memory(org, user, memory[0])
    raise SystemExit("the write committed: the process was not killed")


if __name__ == "__main__":
    main(*sys.argv[1:])
