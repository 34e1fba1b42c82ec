"""``manage.py memora_check``: ``memora-ogm check`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("check")
