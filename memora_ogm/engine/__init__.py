"""The engine: statements built, rendered to Cypher and mapped back to models."""
