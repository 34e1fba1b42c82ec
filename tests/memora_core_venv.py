"""memora-core 0.3.1 with its own pins, in a virtual environment of its own, for the interop
tests: its ``QdrantDB`` needs qdrant-client 1.12.1 (whose fastembed helpers 1.20 dropped)
and fastembed 0.5, which cannot live beside memora-ogm's.

The environment is made once (``pip install memora-core==0.3.1``, about half a minute from
PyPI) and reused (:mod:`side_venvs`): ``scripts/test.sh`` starts the build in the
background (``python tests/memora_core_venv.py``) while it installs memora-ogm, and the
interop tests wait for it instead of building beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from side_venvs import cached_venv

MEMORA_CORE = "memora-core==0.3.1"
DRIVER = Path(__file__).with_name("memora_core_driver.py")


def venv_python() -> Path:
    """The environment's Python, built on first use."""
    return cached_venv("memora-core-0.3.1", [MEMORA_CORE])


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
