"""The project's settings as memora-ogm's: ``MEMORA_OGM``, and django_neomodel's ``NEOMODEL_*``.

``MEMORA_OGM`` is one database's settings, or, as Django's ``DATABASES``, several by
alias with ``default`` among them. A project that drops django_neomodel keeps its settings
(``NEOMODEL_NEO4J_BOLT_URL`` also names memora-ogm's default server when nothing else
does); one with ``MEMORA_OGM`` alone gets neomodel pointed at the default server, so the
node classes work in views and the shell.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from neomodel import get_config

from memora_ogm.config import ConfigurationError, MemoraConfig

#: The Django setting holding memora-ogm's settings.
SETTING = "MEMORA_OGM"
#: The alias of the one database of a flat ``MEMORA_OGM``, and the first of several.
DEFAULT = "default"
#: Every setting a django_neomodel release gave neomodel's config, and its field
#: (``NEOMODEL_SIGNALS`` drove ``DjangoNode``'s signals, left out: docs/django.md).
NEOMODEL_SETTINGS = {
    "NEOMODEL_NEO4J_BOLT_URL": "database_url",
    "NEOMODEL_FORCE_TIMEZONE": "force_timezone",
    "NEOMODEL_MAX_CONNECTION_POOL_SIZE": "max_connection_pool_size",
    "NEOMODEL_MAX_POOL_SIZE": "max_connection_pool_size",  # its name before 0.0.7
    "NEOMODEL_ENCRYPTED_CONNECTION": "encrypted",  # read until 0.0.6
}


def apply_neomodel_settings() -> dict[str, Any]:
    """Give neomodel's config the ``NEOMODEL_*`` settings the project has; what was set."""
    values = {
        field: getattr(settings, name)
        for name, field in NEOMODEL_SETTINGS.items()
        if hasattr(settings, name)
    }
    if values:
        get_config().update(**values)
    return values


def point_neomodel_at_memora() -> None:
    """Put the node classes on the project's server, unless the project gave neomodel
    one itself. Nothing connects until a node class is used."""
    neomodel = get_config()
    if neomodel.database_url or neomodel.driver:
        return
    try:
        conn = memora_config().neo4j
        neomodel.update(database_url=conn.neomodel_url, database_name=conn.database)
    except ValueError:  # unusable settings: the checks say so (memora_ogm.E001)
        return


def neo4j_settings_from_url(url: str) -> dict[str, str]:
    """``scheme://user:password@host:port[/database]`` (neomodel's URL) as ``NEO4J_*``
    settings, split as neomodel splits it: credentials at the last ``@``, the user at
    the first ``:``, nothing unquoted."""
    parts = urlsplit(url)
    credentials, at, host = parts.netloc.rpartition("@")
    username, colon, password = credentials.partition(":")
    if not (parts.scheme and at and colon and host):
        raise ConfigurationError(
            "NEOMODEL_NEO4J_BOLT_URL is not bolt://user:password@host:port[/database]"
        )
    found = {
        "NEO4J_URI": f"{parts.scheme}://{host}",
        "NEO4J_USERNAME": username,
        "NEO4J_PASSWORD": password,
    }
    database = parts.path.strip("/")
    if database:
        found["NEO4J_DATABASE"] = database
    return found


def _by_alias(chosen: Mapping[str, Any]) -> bool:
    """Whether ``MEMORA_OGM`` names its databases: every value a dict of settings."""
    return bool(chosen) and all(isinstance(value, Mapping) for value in chosen.values())


def databases() -> dict[str, dict[str, Any]]:
    """``MEMORA_OGM`` by alias, ``default`` first: a dict of settings is the ``default``
    database's; a dict of such dicts names each database."""
    chosen: Mapping[str, Any] = getattr(settings, SETTING, {})
    if not _by_alias(chosen):
        return {DEFAULT: dict(chosen)}
    if DEFAULT not in chosen:
        raise ConfigurationError(
            f"{SETTING} names the databases {sorted(chosen)}; one must be {DEFAULT!r}"
        )
    return {DEFAULT: dict(chosen[DEFAULT])} | {
        alias: dict(values) for alias, values in chosen.items() if alias != DEFAULT
    }


def check_database(database: str) -> str:
    """``database`` if ``MEMORA_OGM`` has it, else a :class:`ConfigurationError` naming
    the aliases it has."""
    found = databases()
    if database not in found:
        raise ConfigurationError(f"{SETTING} has no database {database!r}; it has {list(found)}")
    return database


def setting_name(name: str, database: str = DEFAULT) -> str:
    """Where the user sets ``name`` of ``database``: ``MEMORA_OGM['NEO4J_URI']``, or
    ``MEMORA_OGM['archive']['NEO4J_URI']`` when ``MEMORA_OGM`` names its databases."""
    inside = f"[{database!r}]" if _by_alias(getattr(settings, SETTING, {})) else ""
    return f"{SETTING}{inside}[{name!r}]"


def memora_config(database: str = DEFAULT) -> MemoraConfig:
    """The memora-ogm settings of ``database``, read now. The default database's names
    left out come from the environment, then ``NEOMODEL_NEO4J_BOLT_URL`` names its server;
    another database's come from its own dict alone (the environment names one server)."""
    chosen = databases()[check_database(database)]
    if database != DEFAULT:
        return MemoraConfig.from_settings(chosen, environ={})
    url = getattr(settings, "NEOMODEL_NEO4J_BOLT_URL", None)
    if url and not chosen.get("NEO4J_URI") and not os.environ.get("NEO4J_URI"):
        chosen = {**neo4j_settings_from_url(url), **chosen}
    return MemoraConfig.from_settings(chosen)
