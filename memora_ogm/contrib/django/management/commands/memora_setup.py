"""``manage.py memora_setup``: ``memora-ogm setup`` on the project's ``MEMORA_OGM`` settings."""

from memora_ogm.contrib.django.management.wrapped import command

Command = command("setup")
