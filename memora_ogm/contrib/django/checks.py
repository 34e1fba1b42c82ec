"""``manage.py check``'s memora-ogm checks: ids ``memora_ogm.E…`` and ``memora_ogm.W…``.

All are tagged ``memora_ogm``. Those that ask a server (Neo4j, a Qdrant server) are also
tagged ``database`` and, as Django's own database checks, run only when Django passes
``databases`` (``manage.py check --database default``, ``migrate``): ``runserver`` and
the other commands never wait on a server. The settings and an embedded store's folder
are checked by every ``check``; an embedded store is also a deploy warning.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core import checks
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

from memora_ogm.config import MemoraConfig
from memora_ogm.contrib.django.conf import DEFAULT, databases, memora_config, setting_name
from memora_ogm.migrations import MIGRATIONS

if TYPE_CHECKING:
    from memora_ogm import sync

TAG = "memora_ogm"
#: Seconds a check waits for a server to answer.
TIMEOUT = 3.0


def register() -> None:
    """Add the checks to Django's registry (the app's ``ready()``; idempotent)."""
    checks.register(check_settings, TAG)
    checks.register(check_graph, TAG, checks.Tags.database)
    checks.register(check_vector_store, TAG, checks.Tags.database)
    checks.register(check_embedded_store_deployed, TAG, deploy=True)


def _config() -> MemoraConfig | None:
    """The settings, or None when they are unusable (:func:`check_settings` says so)."""
    try:
        return memora_config()
    except ValueError:
        return None


def check_settings(**kwargs: Any) -> list[checks.CheckMessage]:
    """The settings of every database are usable, and an embedded store's folder can be
    written."""
    try:
        aliases = list(databases())
    except ValueError as error:  # named databases without a default
        return [_unusable_settings(str(error), DEFAULT)]
    found = []
    for alias in aliases:
        try:
            config = memora_config(alias)
        except ValueError as error:  # ConfigurationError, Neo4jSettingsError
            found.append(_unusable_settings(str(error), alias))
            continue
        problem = _folder_problem(Path(config.qdrant_path)) if config.qdrant_path else None
        if problem is not None:
            found.append(_unusable_store(config, problem))
    return found


def _unusable_settings(error: str, database: str) -> checks.CheckMessage:
    which = "" if database == DEFAULT else f" of the database {database!r}"
    fallback = " (or the NEO4J_URI environment variable)" if database == DEFAULT else ""
    return checks.Error(
        f"memora-ogm's settings{which} are unusable: {error}",
        hint=f"Set {setting_name('NEO4J_URI', database)}{fallback} "
        "and the other names docs/django.md lists, and only those.",
        id="memora_ogm.E001",
    )


def check_graph(databases: Sequence[str] | None = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Neo4j reachable with these credentials, with APOC, constraints and migrations."""
    config = _config()
    if not databases or config is None:
        return []
    from memora_ogm.sync import Neo4jGraphInterface

    conn = config.neo4j
    driver_config = {"connection_timeout": TIMEOUT, "connection_acquisition_timeout": TIMEOUT}
    with Neo4jGraphInterface(
        conn.uri, conn.username, conn.password, conn.database, driver_config=driver_config
    ) as interface:
        try:
            interface.graph.connect()
        except AuthError as error:
            return [
                checks.Error(
                    f"Neo4j at {conn.uri} refused user {conn.username!r}: {error.message}",
                    hint="Correct NEO4J_USERNAME and NEO4J_PASSWORD in MEMORA_OGM "
                    "(or the environment).",
                    id="memora_ogm.E003",
                )
            ]
        except (ServiceUnavailable, OSError, ValueError) as error:
            return [
                checks.Error(
                    f"Neo4j is not reachable at {conn.uri}: {error}",
                    hint="Start Neo4j or correct MEMORA_OGM['NEO4J_URI']; for a local "
                    "server, run `memora-ogm server start` and use what it prints.",
                    id="memora_ogm.E002",
                )
            ]
        try:
            return schema_findings(interface)
        except Neo4jError as error:  # e.g. a database that does not exist
            return [
                checks.Error(
                    f"Neo4j at {conn.uri} refused database {conn.database!r}: {error.message}",
                    hint="Correct MEMORA_OGM['NEO4J_DATABASE'] or create the database.",
                    id="memora_ogm.E002",
                )
            ]


def schema_findings(interface: sync.Neo4jGraphInterface) -> list[checks.CheckMessage]:
    """APOC, the schema's constraints and the migrations, on a reachable server."""
    graph = interface.graph
    found: list[checks.CheckMessage] = []
    if not graph.has_apoc():
        found.append(
            checks.Warning(
                "Neo4j has no APOC: memories' user_/agent_ placeholders are resolved in "
                "Python (memora_ogm.placeholders) after each read, not on the server.",
                hint="Install APOC core on the server for server-side resolution, or "
                "silence memora_ogm.W001 to keep the Python fallback.",
                id="memora_ogm.W001",
            )
        )
    missing = interface.missing_constraints()
    if missing:
        found.append(
            checks.Warning(
                f"Neo4j lacks memora-ogm's constraints {', '.join(missing)}: concurrent "
                "writes can duplicate organisations, users or days.",
                hint="Run `python manage.py memora_setup` (idempotent).",
                id="memora_ogm.W002",
            )
        )
    applied = set(interface.applied_migrations())
    pending = [f"{m.version}_{m.name}" for m in MIGRATIONS if m.version not in applied]
    if pending:
        found.append(
            checks.Warning(
                f"memora-ogm migrations are pending: {', '.join(pending)}.",
                hint="Run `python manage.py memora_migrate` "
                "(`--list` shows applied and pending ones).",
                id="memora_ogm.W003",
            )
        )
    return found


def check_vector_store(
    databases: Sequence[str] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """A Qdrant server (``QDRANT_URL``) answers."""
    config = _config()
    if not databases or config is None or not config.qdrant_url:
        return []
    from qdrant_client import QdrantClient

    from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME

    client = QdrantClient(
        url=config.qdrant_url,
        api_key=config.qdrant_api_key,
        timeout=int(TIMEOUT),
        check_compatibility=False,
    )
    try:  # one request; a missing collection is memora_setup's business, not this
        client.collection_exists(config.collection or MEMORA_COLLECTION_NAME)
    except Exception as error:  # any failure to answer is the finding
        return [_unusable_store(config, str(error) or type(error).__name__)]
    finally:
        client.close()
    return []


def _unusable_store(config: MemoraConfig, problem: str) -> checks.CheckMessage:
    return checks.Error(
        f"the vector store at {config.qdrant_url or config.qdrant_path} is not usable: {problem}",
        hint="Start the Qdrant server or correct QDRANT_URL and QDRANT_API_KEY"
        if config.qdrant_url
        else "Point QDRANT_PATH at a folder this process may create and write.",
        id="memora_ogm.E004",
    )


def _folder_problem(folder: Path) -> str | None:
    existing = next(parent for parent in (folder, *folder.parents) if parent.exists())
    if not existing.is_dir():
        return f"{existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    return None


def check_embedded_store_deployed(**kwargs: Any) -> list[checks.CheckMessage]:
    """An embedded store (``QDRANT_PATH``) is one process's: several workers need a server."""
    config = _config()
    if config is None or not config.qdrant_path:
        return []
    return [
        checks.Warning(
            f"the vector store is embedded (QDRANT_PATH={config.qdrant_path}): only one "
            "process can open it, so gunicorn -w N, uvicorn --workers N or several "
            "servers fail or lose writes.",
            hint="Use a Qdrant server (MEMORA_OGM['QDRANT_URL']) when deploying with more "
            "than one process; silence memora_ogm.W004 if the server runs one process.",
            id="memora_ogm.W004",
        )
    ]
