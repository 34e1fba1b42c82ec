"""The Django app: reads the settings when Django starts and registers the system checks."""

from __future__ import annotations

from django.apps import AppConfig


class MemoraOGMConfig(AppConfig):  # type: ignore[misc]  # Django ships no types
    name = "memora_ogm.contrib.django"
    label = "memora_ogm"
    verbose_name = "memora-ogm"
    #: The admin's anchor model has no table; its id field is fixed so that its migration
    #: fits every project's DEFAULT_AUTO_FIELD.
    default_auto_field = "django.db.models.AutoField"

    def ready(self) -> None:
        from memora_ogm.contrib.django import checks
        from memora_ogm.contrib.django.conf import (
            apply_neomodel_settings,
            point_neomodel_at_memora,
        )

        apply_neomodel_settings()
        point_neomodel_at_memora()
        checks.register()
