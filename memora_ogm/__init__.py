"""memora-ogm: Memora's Neo4j graph layer rebuilt on neomodel (an OGM)."""

__version__ = "0.1.0"
