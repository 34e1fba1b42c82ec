"""Pictures of a memory graph: :class:`MemoryGraph` shows itself in Jupyter and writes a
standalone page (``picture.html``) drawn by Cytoscape.js and its dagre layout, fetched
when the package is built (``setup.py``) and inlined: the page loads nothing from the
network. The read that fills one is declared in :mod:`memora_ogm.calls.picture`.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from memora_ogm.errors import MemoraOGMError


@dataclass(frozen=True)
class GraphNode:
    """A node of a picture: ``id`` is unique in it, ``kind`` the node's label."""

    id: str
    kind: str
    caption: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphEdge:
    """A relationship of a picture, ``type`` as stored (``IS_NEXT``...)."""

    source: str
    target: str
    type: str


@dataclass(frozen=True)
class MemoryGraph:
    """What ``graph_of`` read, as nodes and edges; a page of its own in HTML."""

    title: str
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]

    def node(self, node_id: str) -> GraphNode:
        """The node with this id (``KeyError`` when the picture has none)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def html(self) -> str:
        """The picture as a standalone page: script, styles and data inlined."""
        data = {
            "title": self.title,
            "nodes": [vars(node) for node in self.nodes],
            "edges": [vars(edge) for edge in self.edges],
        }
        # "<" escaped: no text of the graph can close the script element it travels in.
        payload = json.dumps(data, ensure_ascii=False, default=str).replace("<", "\\u003c")
        parts = {"title": html.escape(self.title), "scripts": _scripts(), "data": payload}
        page = (resources.files("memora_ogm") / "picture.html").read_text(encoding="utf-8")
        return re.sub(r"\{\{(title|scripts|data)\}\}", lambda slot: parts[slot[1]], page)

    def write_html(self, path: str | Path) -> Path:
        """Write :meth:`html` to ``path``; returns it."""
        target = Path(path)
        target.write_text(self.html(), encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        """Jupyter: the page in a frame of its own (its script and styles stay in it)."""
        return (
            f'<iframe srcdoc="{html.escape(self.html())}" style="width:100%;height:640px;'
            'border:1px solid #ddd" title="memory graph"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<MemoryGraph {self.title!r}: {len(self.nodes)} nodes, {len(self.edges)} edges>"


def _scripts() -> str:
    """The inlined browser builds, each with its licence (see ``setup.py``)."""
    folder = resources.files("memora_ogm") / "graph_assets"
    try:
        scripts = [
            f"<script>/*\n{(folder / f'{name}.COPYING').read_text(encoding='utf-8')}*/\n"
            f"{(folder / f'{name}.min.js').read_text(encoding='utf-8')}</script>"
            for name in SCRIPTS
        ]
    except FileNotFoundError:
        raise MemoraOGMError(
            f"the graph pictures' scripts are missing from {folder}: reinstall memora-ogm "
            "(its build fetches them, and fails when it cannot: see setup.py)"
        ) from None
    return "\n".join(scripts)


#: The npm packages whose browser builds draw the pages (``setup.py`` pins them).
SCRIPTS = ("cytoscape", "cytoscape-dagre")
