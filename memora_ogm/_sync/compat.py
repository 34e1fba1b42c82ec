"""The few calls that differ between the async source and its generated sync twin."""

from time import sleep

__all__ = ["sleep"]
