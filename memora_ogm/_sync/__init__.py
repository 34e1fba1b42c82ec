# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The async source of truth: ``memora_ogm._sync`` is generated from it (generate_sync.py)."""
