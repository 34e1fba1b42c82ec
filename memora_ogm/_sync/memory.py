# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Memories: reads with placeholders resolved, contrary-update history, deletes."""

from __future__ import annotations

from memora_ogm._sync.component import GraphComponent


class Neo4jMemory(GraphComponent):
    pass
