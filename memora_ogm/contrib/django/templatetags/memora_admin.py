"""The admin pages' filters: ``{% load memora_admin %}``."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


def moment(value: datetime | None) -> str:
    """A time in the current time zone, to the second (``2025-01-01 03:00:00``): rows of
    memories come seconds apart, and Django's localised format costs a user's page of 50
    memories and 20 interactions a third of its rendering (``benchmarks/bench_admin.py``)."""
    if value is None:
        return ""
    return str(timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S"))


register.filter("moment", moment)
