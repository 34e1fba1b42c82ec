"""Vector stores that the graph layer keeps in step with its memories."""
