#!/usr/bin/env bash
# Installs memora-ogm with its test tools into the current Python and runs the whole
# test suite against a real Neo4j 5.26 with APOC (NEO4J_URI & co., else Docker, else
# an embedded Neo4j Community built from Maven Central). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# tests/test_memora_interop.py runs memora-core 0.3.1's own QdrantDB with its own pins
# (qdrant-client 1.12.1, fastembed 0.5) in a virtual environment of its own, under
# ${MEMORA_OGM_TEST_CACHE:-~/.cache/memora-ogm-tests}: built here in the background while
# memora-ogm installs (half a minute from PyPI on a fresh machine, then cached), and the
# tests wait for it under its lock. No model is downloaded: tests/fastembed_standins.py
# builds stand-ins of Memora's models (onnx, tokenizers).
python3 tests/memora_core_venv.py >/dev/null 2>&1 &
# tests/test_mcp_clients.py drives the MCP server with the MCP Inspector's CLI (npm, pinned),
# installed the same way.
python3 tests/side_venvs.py >/dev/null 2>&1 &
# tests/test_picture.py draws a graph page in headless Chromium: the system's (Debian's
# chromium package, installed here in the background when missing), else the build
# Playwright fetches for itself once it is installed.
browser() {
    command -v chromium || command -v chromium-browser || command -v google-chrome
}
if ! browser >/dev/null && command -v apt-get >/dev/null; then
    sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
    ($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $sudo apt-get install -y -qq chromium >/dev/null) &
    chromium_install=$!
fi
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q -e '.[test]'
# tests/test_contrib_django_admin.py also runs the admin's tests on the newest Django (6.x
# needs Python 3.12+): an environment of its own with the newest Python 3.12+ found here
# (PATH, else pyenv's), built the same way once memora-ogm's
# dependencies are known (tests/django_latest_venv.py).
python3 tests/django_latest_venv.py >/dev/null 2>&1 &
# Memora's release, whose agent and graph layer tests/test_memora_*.py drive. Without its
# dependencies: its pins (neo4j 5.20, pydantic 2.10, ...) conflict with neomodel 7, and
# what it imports at import time (openai, groq, together) is in the test extra. Skipped
# when already installed, so repeated runs stay quick.
MEMORA_CORE=0.3.1
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('memora-core') != '$MEMORA_CORE')" 2>/dev/null; then
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --no-deps "memora-core==$MEMORA_CORE"
fi
if [ -n "${chromium_install:-}" ]; then
    wait "$chromium_install"
elif ! browser >/dev/null; then
    python3 -m playwright install chromium
fi
# Test servers live minutes and answer small statements: HotSpot's first compiler alone
# halves the CPU of an embedded server's start (10.1 to 5.1 CPU-seconds measured) and of
# short work, on a machine whose two cores the suite keeps busy.
export MEMORA_OGM_NEO4J_JAVA_OPTS="${MEMORA_OGM_NEO4J_JAVA_OPTS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
# Tests empty the graph and fill it again all the time: with Neo4j's default, every cached
# plan older than 10 s was made again the next time it ran (the statistics had moved), and
# planning took most of the servers' CPU (thread dumps of two of them under the suite).
export MEMORA_OGM_NEO4J_SETTINGS="${MEMORA_OGM_NEO4J_SETTINGS-dbms.cypher.min_replan_interval=1h}"
# Two workers (pytest-xdist), each with a Neo4j of its own from the same chain (Docker, else
# the embedded server), a test module at a time (the modules that share a server of
# their own, SHARED_SERVERS in tests/conftest.py, as one unit, so that one worker alone
# starts it): the suite mostly waits on servers and subprocesses, so two streams fit two
# cores. A server of your own (NEO4J_URI) is shared, and its tests empty it between them,
# so then one worker. MEMORA_OGM_TEST_WORKERS overrides.
# Modules go out in the order tests/conftest.py gives them (the longest first), not
# xdist's default of the most tests first, which left the long one-test modules for last.
workers="${MEMORA_OGM_TEST_WORKERS:-$([ -n "${NEO4J_URI:-}" ] && echo 1 || echo 2)}"
if [ "$workers" -gt 1 ]; then
    set -- -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
fi
exec python3 -m pytest "$@"
