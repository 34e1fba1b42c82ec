"""The async source of truth. ``memora_ogm._sync`` is generated from it (see scripts/unasync_sync_twin.py)."""
