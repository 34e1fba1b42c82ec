"""The async source of truth: ``memora_ogm._sync`` is generated from it (generate_sync.py)."""
