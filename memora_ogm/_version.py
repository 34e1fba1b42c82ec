"""The installed distribution's version, apart from the facade so that what reports it
(telemetry, exports, the command line, the MCP server) need not import the facade."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memora-ogm")  # single source: pyproject.toml
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
