"""Pydantic models returned by the graph layer and accepted by its write methods."""
