# memora-ogm's Django fixtures (memora_graph, MemoraGraphMixin's) next to pytest-django's.
pytest_plugins = ["memora_ogm.contrib.django.testing"]
