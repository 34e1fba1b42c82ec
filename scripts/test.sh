#!/usr/bin/env bash
# Installs memora-ogm with its test tools into the current Python and runs the whole
# test suite against a real Neo4j 5.26 with APOC (NEO4J_URI & co., else Docker, else
# an embedded Neo4j Community built from Maven Central). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q -e '.[test]'
exec python3 -m pytest "$@"
