"""The newest Django in a virtual environment of its own, for the admin's tests.

Django 6 needs Python 3.12 or later, and the suite runs on the machine's Python 3.11 (so
its ``django`` is the 5.2 LTS). This environment is made with the newest Python 3.12+
this machine has (on ``PATH``, else pyenv's), with memora-ogm's dependencies (as the
running environment has them installed), the newest Django and pytest-django.
memora-ogm itself is installed from the checkout that asks, editable and without
dependencies (seconds), each time. Built once per set of dependencies under the tests'
cache (:mod:`side_venvs`): ``scripts/test.sh`` starts the build in the background
(``python tests/django_latest_venv.py``).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from side_venvs import cached_venv

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ["django>=6", "pytest>=8", "pytest-asyncio>=1.0", "pytest-django"]


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    major, minor = done.stdout.split()
    return int(major), int(minor)


def newest_python() -> str:
    """The newest Python 3.12+ here: on ``PATH``, else one of pyenv's versions."""
    candidates = [found for name in ("python3.13", "python3.12") if (found := shutil.which(name))]
    roots = {Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))}
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if Path(folder).name == "shims":  # pyenv's, wherever it lives
            roots.add(Path(folder).parent)
    for root in sorted(roots):
        candidates += [str(path) for path in sorted(root.glob("versions/3.1[2-9]*/bin/python3"))]
    usable: list[tuple[tuple[int, int], str]] = []
    for python in candidates:
        version = _version(python)
        if version is not None and version >= (3, 12):
            usable.append((version, python))
    if not usable:
        raise RuntimeError(
            "Django 6 needs Python 3.12 or later and none was found (on PATH as python3.12 "
            "or python3.13, or under pyenv's versions): install one, e.g. `pyenv install 3.12`."
        )
    return max(usable)[1]


def requirements() -> list[str]:
    """memora-ogm's own dependencies (as installed here, its extras left out), and the tools."""
    listed = importlib.metadata.requires("memora-ogm") or []
    return [*(line for line in listed if "extra ==" not in line), *TOOLS]


def venv_python(checkout: Path | None = None) -> Path:
    """The environment's Python, built on first use; with ``checkout`` installed in it."""
    return cached_venv("django-latest", requirements(), newest_python(), editable=checkout)


def django_version(python: Path) -> str:
    done = subprocess.run(
        [str(python), "-c", "import django; print(django.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


if __name__ == "__main__":
    built = venv_python()
    print(f"{built}: Django {django_version(built)}")
    sys.exit(0 if re.match(r"\d", django_version(built)) else 1)
