"""memora-ogm in a Django project: add ``"memora_ogm.contrib.django"`` to ``INSTALLED_APPS``.

Settings come from the ``MEMORA_OGM`` dict, else the environment; django_neomodel's
``NEOMODEL_*`` keep working (:mod:`.conf`). Views take this process's facade from
:func:`get_interface` or :func:`get_async_interface`.
"""

from memora_ogm.contrib.django.conf import memora_config
from memora_ogm.contrib.django.interfaces import get_async_interface, get_interface

__all__ = ["get_async_interface", "get_interface", "memora_config"]
