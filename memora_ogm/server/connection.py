"""Connection settings for a Neo4j server, whichever way it was obtained."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

ENV_URI = "NEO4J_URI"
ENV_USERNAME = "NEO4J_USERNAME"
ENV_PASSWORD = "NEO4J_PASSWORD"
ENV_DATABASE = "NEO4J_DATABASE"
DEFAULT_USERNAME = "neo4j"
DEFAULT_DATABASE = "neo4j"

# What would make ``scheme://user:password@host`` ambiguous for neomodel.
_URL_UNSAFE = frozenset("/?#")


@dataclass(frozen=True)
class Neo4jConnection:
    """Where a Neo4j server listens and how to log in.

    ``backend``: ``"env"`` (``NEO4J_*``), ``"docker"``, ``"maven"`` (the embedded server) or
    ``"state"`` (the one ``memora-ogm server start`` runs).
    """

    uri: str
    username: str
    password: str = field(repr=False)
    database: str = DEFAULT_DATABASE
    backend: str = "env"

    @property
    def auth(self) -> tuple[str, str]:
        """``(username, password)`` as the neo4j driver's ``auth`` argument wants it."""
        return (self.username, self.password)

    @property
    def neomodel_url(self) -> str:
        """The URL for ``neomodel.db.set_connection(url=...)``.

        neomodel does not URL-unquote credentials, so they go in verbatim; ones that would make
        the URL ambiguous raise ``ValueError`` (use ``set_connection(driver=...)`` then).
        """
        parts = urlsplit(self.uri)
        if not parts.scheme or not parts.hostname:
            raise ValueError(f"not a Neo4j URI: {self.uri!r}")
        if ":" in self.username or "@" in self.username or _URL_UNSAFE & set(self.username):
            raise ValueError("the username cannot be put into a neomodel URL")
        if _URL_UNSAFE & set(self.password):
            raise ValueError(
                "the password contains '/', '?' or '#', which neomodel's URL parser cannot "
                "handle; use neomodel.db.set_connection(driver=...) instead"
            )
        host = parts.netloc.rsplit("@", 1)[-1]
        return f"{parts.scheme}://{self.username}:{self.password}@{host}/{self.database}"

    def env(self) -> dict[str, str]:
        """The ``NEO4J_*`` variables that point other processes at this server."""
        return {
            ENV_URI: self.uri,
            ENV_USERNAME: self.username,
            ENV_PASSWORD: self.password,
            ENV_DATABASE: self.database,
        }

    def export_lines(self) -> list[str]:
        """Shell ``export`` lines for :meth:`env`, safely quoted."""
        return [f"export {key}={shlex.quote(value)}" for key, value in self.env().items()]


class Neo4jSettingsError(ValueError):
    """The ``NEO4J_*`` environment variables are incomplete or malformed."""


def connection_from_env(environ: Mapping[str, str] = os.environ) -> Neo4jConnection | None:
    """The server named by ``NEO4J_URI`` & co., or None when ``NEO4J_URI`` is unset/empty."""
    uri = environ.get(ENV_URI, "").strip()
    if not uri:
        return None
    if not urlsplit(uri).scheme:
        raise Neo4jSettingsError(
            f"{ENV_URI}={uri!r} is not a URI; expected e.g. bolt://localhost:7687 "
            "or neo4j+s://xxxx.databases.neo4j.io"
        )
    password = environ.get(ENV_PASSWORD)
    if password is None:
        raise Neo4jSettingsError(f"{ENV_URI} is set but {ENV_PASSWORD} is not")
    username = environ.get(ENV_USERNAME) or DEFAULT_USERNAME
    return Neo4jConnection(uri, username, password, environ.get(ENV_DATABASE) or DEFAULT_DATABASE)
