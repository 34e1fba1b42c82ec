# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The async source of truth. ``memora_ogm._sync`` is generated from it (see scripts/unasync_sync_twin.py)."""
