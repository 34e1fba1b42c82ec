"""Settings of the example project: no SQL database, Memora's graph through memora-ogm.

``MEMORA_OGM`` names only what differs from the defaults; the server (``NEO4J_URI`` & co.)
and the vector store's folder (``QDRANT_PATH``) come from the environment.
"""

SECRET_KEY = "example-only"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
INSTALLED_APPS = ["memora_ogm.contrib.django", "memory_api"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "django_project.urls"
DATABASES: dict[str, dict[str, str]] = {}
USE_TZ = True

MEMORA_OGM = {
    # Offline feature hashing, so the example runs where no model can be downloaded;
    # leave EMBEDDER out to embed with Memora's models.
    "EMBEDDER": "hashing",
}
