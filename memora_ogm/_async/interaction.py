"""Interactions: message chains with the memories extracted from them."""

from __future__ import annotations

from memora_ogm._async.component import GraphComponent


class Neo4jInteraction(GraphComponent):
    pass
