"""``manage.py memora_inspect``: ``memora-ogm inspect`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command
from memora_ogm.inspector import add_inspect_parser

Command = command(add_inspect_parser)
