"""``manage.py memora_setup``: ``memora-ogm setup`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.cli import add_setup_parser
from memora_ogm.contrib.django.management.wrapped import WrappedCommand


class Command(WrappedCommand):
    declare = staticmethod(add_setup_parser)
