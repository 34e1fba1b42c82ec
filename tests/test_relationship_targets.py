"""A relationship named by a class not yet defined points at memora-ogm's class, whoever
imports the node classes first (compile-only: no server).

neomodel resolves a target given as a bare name in the first module up the import
stack whose globals hold that name. A Django project whose module imports its own
``User`` (``django.contrib.auth.models.User``) and then the node classes would
otherwise get ``Org.users`` pointing at Django's ``User``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

IMPORTER = """
class User:  # the importer's own User, as a Django module has one
    pass

class Memory:
    pass

from memora_ogm.{twin} import nodes
from memora_ogm.engine.mapping import target_class

wrong = []
for cls in nodes.NODES.schema:
    for name, rel in cls.defined_properties(aliases=False, properties=False).items():
        target = target_class(rel)
        if target.__module__ != nodes.__name__:
            wrong.append(f"{{cls.__name__}}.{{name}} -> {{target.__module__}}.{{target.__name__}}")
print("\\n".join(wrong) or "all ours")
"""


@pytest.mark.parametrize("twin", ["_async", "_sync"])
def test_string_targets_resolve_to_our_classes_whatever_the_importer_holds(twin: str) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", IMPORTER.format(twin=twin)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert ran.stdout.strip() == "all ours", ran.stdout
