"""Facade calls declared apart from running them: each facade method checks its arguments
and declares a :class:`~memora_ogm.engine.call.Call` (or ``Batches``). No I/O, so both twins
share them and tests compile them offline."""
