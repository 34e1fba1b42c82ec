"""Environments beside the suite's, for what cannot live in it: memora-core 0.3.1 with its
own pins, the newest Django (Python 3.12+), LangGraph's MCP client (mcp<2), and the MCP
Inspector's CLI (npm).

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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


def _home(name: str, requirements: Sequence[str]) -> Path:
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:12]
    home = cache() / f"{name}-{key}"
    home.parent.mkdir(parents=True, exist_ok=True)
    return home


@contextmanager
def _held(home: Path) -> Iterator[None]:
    """``home``'s lock, held by one process at a time (released when the file closes)."""
    with open(home.with_name(home.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _made(home: Path, build: Callable[[Path], object]) -> None:
    """``home`` built by ``build`` in a folder beside it, moved into place once complete."""
    if home.exists():
        return
    building = home.with_name(home.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    build(building)
    building.rename(home)


def cached_venv(
    name: str,
    requirements: Sequence[str],
    python: str = sys.executable,
    editable: Path | None = None,
) -> Path:
    """The Python of environment ``name`` with ``requirements`` (built on first use), and
    ``editable`` installed in it without dependencies, each time, if given."""

    def build(folder: Path) -> None:
        subprocess.run([python, "-m", "venv", str(folder)], check=True)
        # venv scripts name their folder; a moved environment runs through its python.
        pip(folder / "bin" / "python", *requirements)

    home = _home(name, [python, *requirements])
    with _held(home):
        _made(home, build)
        if editable is not None:
            pip(home / "bin" / "python", "--no-deps", "-e", str(editable))
    return home / "bin" / "python"


def cached_npm(name: str, package: str) -> Path:
    """The ``node_modules/.bin`` folder with npm ``package`` (pinned), installed on first
    use (its links are relative, so the folder may move into place)."""

    def build(folder: Path) -> None:
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed (Debian: apt-get install npm)"
        command = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", package]
        # The registry fails a fresh machine's install now and then (a CI run lost one
        # to an exit status alone): three tries, and npm's own words if all fail.
        for _ in range(3):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode == 0:
                return
            shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"npm could not install {package}:\n{done.stderr[-3000:]}")

    home = _home(name, [package])
    with _held(home):
        _made(home, build)
    return home / "node_modules" / ".bin"


#: The MCP Inspector, pinned: its 0.x CLI runs on Debian's Node 20 (2.x needs Node 22).
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"


def inspector() -> Path:
    """The Inspector's ``mcp-inspector`` command, installed on first use."""
    return cached_npm("mcp-inspector", INSPECTOR) / "mcp-inspector"


if __name__ == "__main__":  # scripts/test.sh installs the Inspector ahead, in the background
    inspector()
