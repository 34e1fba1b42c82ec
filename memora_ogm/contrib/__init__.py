"""Integrations with web frameworks: ``memora_ogm.contrib.django``, ``.flask``, ``.fastapi``.

Each reads the same settings (:class:`~memora_ogm.config.MemoraConfig`) and holds
one interface per process, opened on first use and closed at exit
(:class:`~memora_ogm.config.PerProcess`), so that a prefork server's workers each
open their own connections, whether the app was loaded before the fork or after.
"""
