"""The few calls that differ between the async source and its generated sync twin."""

from time import sleep

from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.embedding import SyncEmbeddingFunction as EmbeddingFunction

__all__ = ["EmbeddingFunction", "default_embedding", "sleep"]


def default_embedding(dimension: int) -> EmbeddingFunction:
    """The offline ``HashingEmbedding``, called synchronously."""
    return HashingEmbedding(dimension).embed
