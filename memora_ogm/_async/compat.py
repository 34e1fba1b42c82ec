"""The few calls that differ between the async source and its generated sync twin."""

from asyncio import sleep

__all__ = ["sleep"]
