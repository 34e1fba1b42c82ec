"""``manage.py memora_inspect``: ``memora-ogm inspect`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import WrappedCommand
from memora_ogm.inspector import add_inspect_parser


class Command(WrappedCommand):
    declare = staticmethod(add_inspect_parser)
