"""The project docs/django.md's quick start builds, built once per test process."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

from docs_blocks import follow

from memora_ogm.server import Neo4jConnection


def project_env(conn: Neo4jConnection) -> dict[str, str]:
    """The environment the quick start's reader has: the ``NEO4J_*`` variables exported."""
    return {**os.environ, **conn.env()}


@functools.cache
def quickstart_project(conn: Neo4jConnection) -> Path:
    """A folder with the quick start followed in it: project written, schema installed,
    migrations applied, ``manage.py check --database default`` passed."""
    folder = Path(tempfile.mkdtemp(prefix="memora-ogm-django-quickstart-"))
    follow("django.md", folder, project_env(conn))
    return folder
