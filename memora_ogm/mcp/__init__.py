"""memora-ogm's MCP server (the ``mcp`` extra): ``memora-ogm mcp`` serves an agent's
memory over stdio or Streamable HTTP, each caller held to the tenant of its token.

:mod:`memora_ogm.mcp.server` builds the server and its HTTP app, :mod:`memora_ogm.mcp.auth`
verifies tokens and API keys, :mod:`memora_ogm.cli.mcp` holds the commands. Importing
this package needs no MCP SDK; its modules do.
"""
