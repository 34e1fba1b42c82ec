"""``manage.py memora_export``: ``memora-ogm export`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("export")
