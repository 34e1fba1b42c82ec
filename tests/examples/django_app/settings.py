"""Settings of the example project: no SQL database, only Neo4j through neomodel."""

import os

SECRET_KEY = "example-only"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
INSTALLED_APPS = ["examples.django_app.apps.MemoraExampleConfig"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "examples.django_app.urls"
DATABASES: dict[str, dict[str, str]] = {}
USE_TZ = True

# The setting django_neomodel reads; this app applies it itself in apps.py (django_neomodel
# 0.2 pins neomodel 5). memora-ogm then reuses neomodel's connection: no second driver.
NEOMODEL_NEO4J_BOLT_URL = os.environ.get(
    "NEOMODEL_NEO4J_BOLT_URL", "bolt://neo4j:password@localhost:7687"
)
MEMORA_DATABASE = os.environ.get("NEO4J_DATABASE")  # None: neomodel's default database
MEMORA_QDRANT_LOCATION = ":memory:"
