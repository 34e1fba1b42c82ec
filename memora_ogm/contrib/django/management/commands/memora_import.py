"""``manage.py memora_import``: ``memora-ogm import`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("import")
