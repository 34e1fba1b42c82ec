"""Generate ``memora_ogm/_sync`` from ``memora_ogm/_async``, the way neomodel does.

The async code is the source of truth; the sync twin is the same code with the
async names swapped for their sync counterparts. ``--check`` regenerates into a
temporary folder and fails when the committed twin differs (CI runs it through
tests/test_sync_twin.py).

    python scripts/generate_sync.py          # write memora_ogm/_sync
    python scripts/generate_sync.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import unasync

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "memora_ogm" / "_async"
TARGET = ROOT / "memora_ogm" / "_sync"
#: Hand-written on both sides: the few calls that really differ.
HAND_WRITTEN = {"compat.py"}
GENERATED_HEADER = "# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.\n"

REPLACEMENTS = {
    "_async": "_sync",
    "async_": "sync_",
    "adb": "db",
    "AsyncDriver": "Driver",
    "AsyncSession": "Session",
    "AsyncTransaction": "Transaction",
    "AsyncBookmarkManager": "BookmarkManager",
    "AsyncConnectionManager": "ConnectionManager",
    "AsyncNeo4jDriver": "Neo4jDriver",
    "AsyncGraphDatabase": "GraphDatabase",
    "AsyncNodeSet": "NodeSet",
    "AsyncRelationshipFrom": "RelationshipFrom",
    "AsyncRelationshipTo": "RelationshipTo",
    "AsyncSchemaManager": "SchemaManager",
    "AsyncStructuredNode": "StructuredNode",
    "AsyncStructuredRel": "StructuredRel",
    "AsyncOne": "One",
    "AsyncZeroOrOne": "ZeroOrOne",
    "AsyncOneOrMore": "OneOrMore",
    "AsyncZeroOrMore": "ZeroOrMore",
    "AsyncQdrantClient": "QdrantClient",
    "AsyncEdgeClient": "EdgeClient",
    "async_client": "client",
    "anext": "next",
}


_AWAITABLE = re.compile(r"\bAwaitable\[|\bCoroutine\[Any, Any, ")


def _unwrap_awaitable(text: str) -> str:
    """``Awaitable[X]`` (and ``Coroutine[Any, Any, X]``) is plain ``X`` in sync code: a token
    replacement cannot drop brackets."""
    while match := _AWAITABLE.search(text):
        depth, end = 1, match.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(text[end], 0)
            end += 1
        text = text[: match.start()] + text[match.end() : end - 1] + text[end:]
    return text


def _ruff(text: str, target_name: str) -> str:
    """Sort imports, drop unused ones and format, as if the file already were in the repo.

    ``--stdin-filename`` gives ruff the file's real place, so it applies the project's
    settings and knows ``memora_ogm`` as first-party, whatever folder generates it.
    """
    stdin_name = str(TARGET / target_name)
    for command in (["check", "--fix", "--quiet", "--select", "I,F401"], ["format", "--quiet"]):
        text = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", stdin_name, "-"],
            input=text,
            capture_output=True,
            text=True,
            check=command[0] == "format",
            cwd=ROOT,
        ).stdout
    return text


def generate(target: Path) -> None:
    """Write the sync twin of every generated module into ``target``."""
    with tempfile.TemporaryDirectory() as work:
        staged_source = Path(work) / "_async"
        shutil.copytree(SOURCE, staged_source, ignore=shutil.ignore_patterns("__pycache__"))
        rule = unasync.Rule("/_async/", "/_sync/", additional_replacements=REPLACEMENTS)
        files = [
            str(path)
            for path in sorted(staged_source.glob("*.py"))
            if path.name not in HAND_WRITTEN
        ]
        unasync.unasync_files(files, [rule])
        target.mkdir(parents=True, exist_ok=True)
        generated = sorted((Path(work) / "_sync").glob("*.py"))
        for path in generated:
            text = GENERATED_HEADER + _unwrap_awaitable(path.read_text())
            (target / path.name).write_text(_ruff(text, path.name))
        # A module deleted from the source goes from the twin too.
        keep = {path.name for path in generated} | HAND_WRITTEN
        for path in target.glob("*.py"):
            if path.name not in keep:
                path.unlink()


def stale_files() -> list[str]:
    """Names of generated modules whose committed twin differs from a fresh generation."""
    with tempfile.TemporaryDirectory() as fresh:
        generate(Path(fresh))
        expected = {path.name for path in Path(fresh).glob("*.py")}
        present = {path.name for path in TARGET.glob("*.py")} - HAND_WRITTEN
        stale = sorted(expected ^ present)
        for name in sorted(expected & present):
            if not filecmp.cmp(Path(fresh) / name, TARGET / name, shallow=False):
                stale.append(name)
        return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when memora_ogm/_sync is stale")
    args = parser.parse_args()
    if args.check:
        stale = stale_files()
        if stale:
            print(
                "memora_ogm/_sync is stale; run python scripts/generate_sync.py:", ", ".join(stale)
            )
            return 1
        print("memora_ogm/_sync is up to date")
        return 0
    generate(TARGET)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
