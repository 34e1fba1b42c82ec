"""Django in this test process, once, with the settings of ``examples/django_project``.

Django has one settings module per process: the example app's tests and the in-process
tests of ``memora_ogm.contrib.django`` share it and vary ``MEMORA_OGM`` with
``override_settings``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from memora_ogm.server import Neo4jConnection

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "django_project"


def example_project(conn: Neo4jConnection) -> None:
    """Set Django up on the example project, its ``MEMORA_OGM`` on ``conn`` and on an
    embedded vector store of its own (idempotent)."""
    import django
    from django.apps import apps
    from django.conf import settings

    if apps.ready:
        return
    sys.path.insert(0, str(EXAMPLE))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_SETTINGS_MODULE", "django_project.settings")
        django.setup()
    vectors = tempfile.mkdtemp(prefix="memora-ogm-django-vectors-")
    settings.MEMORA_OGM = {**settings.MEMORA_OGM, **conn.env(), "QDRANT_PATH": vectors}

    from memora_ogm.contrib.django.conf import point_neomodel_at_memora

    point_neomodel_at_memora()
