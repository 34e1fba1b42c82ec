"""Memories: reads with placeholders resolved, contrary-update history, deletes."""

from __future__ import annotations

from memora_ogm._async.component import GraphComponent


class Neo4jMemory(GraphComponent):
    pass
