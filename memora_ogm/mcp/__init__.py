"""memora-ogm's MCP server (the ``mcp`` extra): ``memora-ogm mcp`` serves an agent's
memory over stdio or Streamable HTTP, each caller held to the tenant of its token.

:mod:`memora_ogm.mcp.server` builds the server and its HTTP app, :mod:`memora_ogm.mcp.auth`
verifies tokens and API keys, :mod:`memora_ogm.cli.mcp` holds the commands. Importing
this package needs no MCP SDK; its modules do.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Every right a token may hold, in the order the docs list them.
SCOPES = ("memory:read", "memory:write", "memory:delete", "memory:forget")


@dataclass(frozen=True)
class Limits:
    """What one call may send or get back (each a ``memora-ogm mcp`` option), so that no
    caller can make a save or an answer of any size."""

    #: Messages in one save (``--max-messages``).
    messages: int = 1000
    #: Characters of one message, one memory's text (``--max-text``).
    text: int = 20_000
    #: Characters of a search query (``--max-query``).
    query: int = 2000
    #: Memories or interactions in one page (``--max-page``).
    page: int = 100


#: The limits unless the server's options say otherwise.
DEFAULT_LIMITS = Limits()
