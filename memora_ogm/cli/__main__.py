"""``python3 -m memora_ogm.cli``: the ``memora-ogm`` command."""

from memora_ogm.cli import main

raise SystemExit(main())
