# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Interactions: message chains with the memories extracted from them."""

from __future__ import annotations

from memora_ogm._sync.component import GraphComponent


class Neo4jInteraction(GraphComponent):
    pass
