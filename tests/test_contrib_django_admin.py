"""memora-ogm's pages in Django's admin: ``tests/django_admin/admin_tests.py`` in a pytest
of its own (its project has the admin, a SQL database for logins and the ``LogEntry``
rows, and pytest-django takes one settings module per process), on this session's server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from django_quickstart import project_env

from memora_ogm.server import Neo4jConnection

PROJECT = Path(__file__).resolve().parent / "django_admin"


def admin_tests(
    conn: Neo4jConnection, tmp_path: Path, *argv: str
) -> subprocess.CompletedProcess[str]:
    env = {**project_env(conn), "QDRANT_PATH": str(tmp_path / "vectors")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *argv],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_admin_pages_pass_their_tests(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    done = admin_tests(neo4j_connection, tmp_path, "admin_tests.py")
    assert done.returncode == 0, done.stdout[-5000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
