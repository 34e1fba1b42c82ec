"""``manage.py memora_inspect``: ``memora-ogm inspect`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("inspect")
