"""The sync twin is generated from the async source and must never drift from it."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.base import BaseGraphDB
from memora_ogm.vector_db.base import BaseVectorDB, MemorySearchScope
from memora_ogm.vector_db.qdrant import QdrantDB

ROOT = Path(__file__).resolve().parents[1]


def test_generated_sync_code_is_up_to_date() -> None:
    """Changing async code without running scripts/generate_sync.py fails CI here."""
    result = subprocess.run(
        [sys.executable, "scripts/generate_sync.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


@pytest.mark.parametrize(
    ("original", "twin"),
    [
        (Neo4jGraphInterface, sync.Neo4jGraphInterface),
        (BaseGraphDB, sync.BaseGraphDB),
        (BaseVectorDB, sync.BaseVectorDB),
        (QdrantDB, sync.QdrantDB),
    ],
    ids=lambda cls: cls.__name__,
)
def test_the_twins_have_the_same_methods_and_signatures(original: type, twin: type) -> None:
    assert _public_methods(twin) == _public_methods(original)
    for name, method in inspect.getmembers(twin, inspect.isfunction):
        assert not inspect.iscoroutinefunction(method), name


def test_the_twins_share_one_scope_enum_and_their_bases() -> None:
    assert sync.MemorySearchScope is MemorySearchScope
    assert issubclass(sync.QdrantDB, sync.BaseVectorDB)
    assert issubclass(QdrantDB, BaseVectorDB)
    assert issubclass(sync.Neo4jGraphInterface, sync.BaseGraphDB)
