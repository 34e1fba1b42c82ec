"""Every process forked from one that uses memora-ogm ends when it exits (issue 31).

onnxruntime 1.29 and later start native thread pools when imported; a child forked after
that waits forever in ``exit()`` for the parent's threads. qdrant-client imports fastembed
and so onnxruntime, so this is any process with a vector store. Each case forks in a fresh
interpreter, since the test runner has loaded everything already. The child's exit is
timed here, not left to a server's timeout; the prefork web server's shutdown is in
tests/test_fork_and_loops.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "fork_exit.py"


def _fork_and_exit(case: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), case],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("module", ["memora_ogm", "memora_ogm.sync"])
def test_a_child_forked_after_the_import_exits_and_onnxruntime_is_not_loaded(
    module: str,
) -> None:
    """Importing the package or its sync API loads no vector store, so neither fastembed
    nor onnxruntime, and the forked child's ``sys.exit`` ends it at once."""
    report = _fork_and_exit(module)
    assert report["onnxruntime"] is False
    assert (report["exited"], report["status"]) == (True, 0), report


def test_a_child_forked_after_a_store_embedded_exits() -> None:
    """A prefork parent that saved and searched with Memora's fastembed models (onnxruntime
    loaded, its sessions and thread pools made) forks; the child's ``sys.exit`` ends it
    within the bound."""
    report = _fork_and_exit("embedded")
    assert report["onnxruntime"] is True
    assert (report["exited"], report["status"]) == (True, 0), report
