"""memora-core 0.3.1 with its own pins, in a virtual environment of its own, for the interop
tests: its ``QdrantDB`` needs qdrant-client 1.12.1 (whose fastembed helpers 1.20 dropped)
and fastembed 0.5, which cannot live beside memora-ogm's.

The environment is made once (``pip install memora-core==0.3.1``, about half a minute from
PyPI) under a cache folder (``MEMORA_OGM_TEST_CACHE``, else ``~/.cache/memora-ogm-tests``)
and reused; it is complete once moved into place, so an interrupted build is started
again. One build at a time, under a file lock: ``scripts/test.sh`` starts one in the
background (``python tests/memora_core_venv.py``) while it installs memora-ogm, and the
interop tests wait for it instead of building beside it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

MEMORA_CORE = "memora-core==0.3.1"
DRIVER = Path(__file__).with_name("memora_core_driver.py")


def _cache() -> Path:
    return Path(
        os.environ.get("MEMORA_OGM_TEST_CACHE", Path.home() / ".cache" / "memora-ogm-tests")
    )


def venv_python() -> Path:
    """The environment's Python, built on first use."""
    home = _cache() / "memora-core-0.3.1"
    python = home / "bin" / "python"
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.with_name(home.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if python.exists():
            return python
        building = home.with_name(home.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
        subprocess.run(
            [str(building / "bin" / "python"), "-m", "pip", "install", "-q", MEMORA_CORE],
            check=True,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        # venv scripts name their folder; a moved environment still runs through its python.
        building.rename(home)
    return python


def drive(python: Path, request: dict[str, Any]) -> Any:
    """One request to ``memora_core_driver.py`` in the environment, offline."""
    done = subprocess.run(
        [str(python), str(DRIVER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"memora-core's driver failed:\n{done.stderr}")
    return json.loads(done.stdout)


if __name__ == "__main__":
    venv_python()
