"""memora-ogm's pages in Django's admin: ``tests/django_admin/`` in a pytest of its own
(its project has the admin and a SQL database for logins and ``LogEntry`` rows, and
pytest-django takes one settings module per process), on this session's server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import django_latest_venv
from django_quickstart import project_env

from memora_ogm.server import Neo4jConnection

PROJECT = Path(__file__).resolve().parent / "django_admin"
ROOT = PROJECT.parent.parent


def admin_tests(module: str, env: dict[str, str], python: str = sys.executable) -> str:
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", module],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
    return done.stdout


def test_the_admin_pages_with_djangos_test_client(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """Every page, permission, action and fault, with an embedded vector store, on this
    Python's Django (the 5.2 LTS on Python 3.11)."""
    env = {**project_env(neo4j_connection), "QDRANT_PATH": str(tmp_path / "vectors")}
    admin_tests("admin_tests.py", env)


def test_the_admin_on_two_databases(
    neo4j_connection: Neo4jConnection, second_neo4j_connection: Neo4jConnection
) -> None:
    """``MEMORA_OGM`` naming a ``default`` and an ``archive`` database, on two servers
    (Neo4j Community has one database a server; Enterprise's second database on the same
    server is the same settings with another ``NEO4J_DATABASE``)."""
    second = {f"SECOND_{name}": value for name, value in second_neo4j_connection.env().items()}
    env = {**project_env(neo4j_connection), **second}
    env.pop("QDRANT_PATH", None)
    assert "6 passed" in admin_tests("databases_tests.py", env)


def test_the_admin_pages_on_the_newest_django(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """The same tests on the newest Django (6 and later need Python 3.12+), in an
    environment of its own with this checkout installed in it."""
    python = django_latest_venv.venv_python(ROOT)
    assert int(django_latest_venv.django_version(python).split(".")[0]) >= 6
    env = {
        **project_env(neo4j_connection),
        "QDRANT_PATH": str(tmp_path / "vectors"),
    }
    admin_tests("admin_tests.py", env, str(python))


def test_the_admin_pages_in_headless_chromium(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """An operator's visit to a user of 10,000 memories; its screenshots are left in
    ``tests/django_admin/screenshots/`` (the folder is printed: ``-s`` shows it)."""
    shots = PROJECT / "screenshots"
    for old in shots.glob("*.png"):
        old.unlink()
    env = {**project_env(neo4j_connection), "ADMIN_SCREENSHOTS": str(shots)}
    env.pop("QDRANT_PATH", None)
    admin_tests("browser_tests.py", env)
    print(f"screenshots of the admin's pages: {shots}")
    assert len(list(shots.glob("*.png"))) == 7
