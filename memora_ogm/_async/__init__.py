"""The async source of truth: ``memora_ogm._sync`` is generated from it.

See scripts/generate_sync.py.
"""
