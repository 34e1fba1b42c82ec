"""Measure the package's import structure: rooms, arrows, floors, circles and lines.

    python scripts/import_graph.py [memora_ogm] [--json]

Only the package's own ``.py`` files are read (not tests, ``migrations/`` or other files).

- arrow: file A imports file B: ``import x.y``, ``from x.y import z`` (``z`` a submodule or a
  name of ``x.y``), relative imports, imports inside functions and ``TYPE_CHECKING`` blocks.
- face: an ``__init__.py`` under 40 lines that defines nothing (imports, docstring, ``__all__``);
  it only hands names on, so no arrow is drawn from or to it.
- room: a top-level module (``__init__.py`` too) or a whole sub-package folder directly under
  the package. ``arrows`` counts the room pairs that file arrows join (none within a room).
- floor: a room stands one floor above the highest room it imports; floor 1 imports nothing of
  the package. Rooms in a loop are ordered greedily (the one with the fewest file arrows into
  the rest of its loop lowest) and the arrows against that order are set aside.
- runs back up: an arrow from a room on a lower floor to one on a higher floor (counted as room
  pairs, listed as file pairs).
- circle: files that import each other in a loop (a strongly connected component of the file
  graph). An import of the ``__init__.py`` of a package holding the importing file (say
  ``from memora_ogm import __version__``) is not followed: Python runs it before that file.
- lines: physical lines as ``wc -l`` counts them; the generated twin is ``_sync/``.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path
from typing import Any

Graph = dict[str, set[str]]


def is_face(path: Path, tree: ast.Module, text: str) -> bool:
    """An ``__init__.py`` under 40 lines holding only imports, docstrings and ``__all__``."""
    return (
        path.name == "__init__.py"
        and text.count("\n") < 40
        and all(
            isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr))
            or (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__")
            for node in tree.body
        )
    )


def imported(package: list[str], tree: ast.Module, modules: dict[str, Path]) -> set[Path]:
    """The package's files that a file of ``package`` (dotted, as a list) imports anywhere."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package[: len(package) + 1 - node.level] if node.level else []
            base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                name = f"{base}.{alias.name}"
                names.append(name if name in modules else base)
    return {modules[name] for name in names if name in modules}


def components(graph: Graph) -> list[list[str]]:
    """Strongly connected components, each after every component that it reaches."""
    reach: Graph = {}
    for node in graph:
        reach[node], todo = {node}, [node]
        while todo:
            new = graph[todo.pop()] - reach[node]
            reach[node] |= new
            todo += new
    groups = {tuple(sorted(m for m in reach[n] if n in reach[m])) for n in graph}
    return sorted(map(list, groups), key=lambda group: (len(reach[group[0]]), group))


def floors(rooms: Graph, weight: Counter[tuple[str, str]]) -> dict[str, int]:
    floor: dict[str, int] = {}
    for group in components(rooms):
        left = set(group)
        while left:  # the lowest room next: the fewest file arrows into the rest of its loop
            room = min(sorted(left), key=lambda r: sum(weight[r, t] for t in rooms[r] & left))
            left.remove(room)
            floor[room] = 1 + max((floor[t] for t in rooms[room] - left), default=0)
    return floor


def measure(root: Path) -> dict[str, Any]:
    files = sorted(root.rglob("*.py"))
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    trees = {path: ast.parse(texts[path], str(path)) for path in files}
    name = {path: ".".join(path.relative_to(root.parent).with_suffix("").parts) for path in files}
    modules = {name[path].removesuffix(".__init__"): path for path in files}
    faces = {path for path in files if is_face(path, trees[path], texts[path])}
    arrows = sorted(
        (a, b)
        for a in set(files) - faces
        for b in imported(name[a].split(".")[:-1], trees[a], modules) - faces - {a}
    )
    label = {path: str(path.relative_to(root.parent)) for path in files}
    top = {path: root / path.relative_to(root).parts[0] for path in files}
    room = {path: f"{root.name}/{top[path].name}" + "/" * top[path].is_dir() for path in files}
    weight = Counter((room[a], room[b]) for a, b in arrows if room[a] != room[b])
    rooms: Graph = {r: set() for r in room.values()}
    for source, target in weight:
        rooms[source].add(target)
    floor = floors(rooms, weight)
    back_up = [(a, b) for a, b in arrows if floor[room[a]] < floor[room[b]]]
    loops: Graph = {label[path]: set() for path in files}  # the file graph, for circles
    for a, b in arrows:
        if not (b.name == "__init__.py" and b.parent in a.parents):
            loops[label[a]].add(label[b])
    circles = [group for group in components(loops) if len(group) > 1]
    lines = Counter({False: 0, True: 0})  # True: the generated twin
    for path in files:
        lines[top[path].name == "_sync"] += texts[path].count("\n")
    return {
        "top-level modules": sum(1 for path in files if path.parent == root),
        "rooms": len(rooms),
        "arrows": len(weight),
        "file arrows": len(arrows),
        "floors": max(floor.values(), default=0),
        "arrows that run back up": len({(room[a], room[b]) for a, b in back_up}),
        "circles": len(circles),
        "hand-written lines": lines[False],
        "generated twin lines": lines[True],
        "floor of each room": dict(sorted(floor.items(), key=lambda item: (-item[1], item[0]))),
        "file arrows that run back up": [[label[a], label[b]] for a, b in back_up],
        "files of each circle": circles,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("package", nargs="?", default="memora_ogm", help="the package's folder")
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    args = parser.parse_args()
    result = measure(Path(args.package).resolve())
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        if isinstance(value, int):
            print(f"{key}: {value}")
    print("floors, from the top:")
    for room, number in result["floor of each room"].items():
        print(f"  {number:2}  {room}")
    print(f"file arrows that run back up: {len(result['file arrows that run back up'])}")
    for source, target in result["file arrows that run back up"]:
        print(f"  {source} -> {target}")
    for number, group in enumerate(result["files of each circle"], 1):
        print(f"circle {number}: {', '.join(group)}")


if __name__ == "__main__":
    main()
