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

REPLACEMENTS = {
    "_async": "_sync",
    "async_": "sync_",
    "adb": "db",
    "AsyncGraphDatabase": "GraphDatabase",
    "AsyncNodeSet": "NodeSet",
    "AsyncRelationshipFrom": "RelationshipFrom",
    "AsyncRelationshipTo": "RelationshipTo",
    "AsyncSchemaManager": "SchemaManager",
    "AsyncStructuredNode": "StructuredNode",
    "AsyncQdrantClient": "QdrantClient",
}


def generate(target: Path) -> None:
    """Write the sync twin of every generated module into ``target``."""
    with tempfile.TemporaryDirectory() as work:
        staged_source = Path(work) / "_async"
        shutil.copytree(SOURCE, staged_source, ignore=shutil.ignore_patterns("__pycache__"))
        rule = unasync.Rule("/_async/", "/_sync/", additional_replacements=REPLACEMENTS)
        files = [str(path) for path in sorted(staged_source.glob("*.py")) if path.name not in HAND_WRITTEN]
        unasync.unasync_files(files, [rule])
        staged_target = Path(work) / "_sync"
        for path in staged_target.glob("*.py"):
            text = path.read_text()
            path.write_text(
                "# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.\n" + text
            )
        subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "I,F401", str(staged_target)],
            check=False,
            cwd=ROOT,
        )
        subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--quiet", str(staged_target)], check=True, cwd=ROOT
        )
        target.mkdir(parents=True, exist_ok=True)
        for path in staged_target.glob("*.py"):
            shutil.copyfile(path, target / path.name)


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
            print("memora_ogm/_sync is stale; run python scripts/generate_sync.py:", ", ".join(stale))
            return 1
        print("memora_ogm/_sync is up to date")
        return 0
    generate(TARGET)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
