"""memora-ogm in a Django project: add ``"memora_ogm.contrib.django"`` to ``INSTALLED_APPS``.

Settings come from the ``MEMORA_OGM`` dict (names of
:data:`~memora_ogm.contrib.config.NAMES`, the environment as fallback); django_neomodel's
``NEOMODEL_*`` settings keep working (:mod:`.conf`). Views take this process's facade
from :func:`get_interface` or :func:`get_async_interface`; the ``memora_*`` management
commands wrap the ``memora-ogm`` command; :mod:`.checks` adds ``manage.py check``'s
``memora_ogm.*`` checks and :mod:`.testing` a clean graph per test.
"""

from memora_ogm.contrib.django.conf import memora_config
from memora_ogm.contrib.django.interfaces import get_async_interface, get_interface

__all__ = ["get_async_interface", "get_interface", "memora_config"]
