"""``manage.py memora_migrate``: ``memora-ogm migrate`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("migrate")
