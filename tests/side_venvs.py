"""Virtual environments beside the suite's, for what cannot live in it: memora-core 0.3.1
with its own pins, the newest Django (Python 3.12+), and LangGraph's MCP client (mcp<2).

Each is made once per set of requirements under the tests' cache
(``MEMORA_OGM_TEST_CACHE``, else ``~/.cache/memora-ogm-tests``), under a file lock so
that a build started in the background by ``scripts/test.sh`` is waited for, not
repeated; it is complete once moved into place, so an interrupted build starts again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def cache() -> Path:
    return Path(
        os.environ.get("MEMORA_OGM_TEST_CACHE", Path.home() / ".cache" / "memora-ogm-tests")
    )


def pip(python: Path, *arguments: str) -> None:
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *arguments],
        check=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


def cached_venv(
    name: str,
    requirements: Sequence[str],
    python: str = sys.executable,
    editable: Path | None = None,
) -> Path:
    """The Python of environment ``name`` with ``requirements`` (built on first use), and
    ``editable`` installed in it without dependencies, each time, if given."""
    key = hashlib.sha256("\n".join([python, *requirements]).encode()).hexdigest()[:12]
    home = cache() / f"{name}-{key}"
    built = home / "bin" / "python"
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.with_name(home.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not built.exists():
            building = home.with_name(home.name + ".building")
            shutil.rmtree(building, ignore_errors=True)
            subprocess.run([python, "-m", "venv", str(building)], check=True)
            pip(building / "bin" / "python", *requirements)
            # venv scripts name their folder; a moved environment runs through its python.
            building.rename(home)
        if editable is not None:
            pip(built, "--no-deps", "-e", str(editable))
    return built
