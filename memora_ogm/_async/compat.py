"""The few calls that differ between the async source and its generated sync twin."""

from asyncio import sleep

from memora_ogm.vector_db.embedding import EmbeddingFunction, HashingEmbedding

__all__ = ["EmbeddingFunction", "default_embedding", "sleep"]


def default_embedding(dimension: int) -> EmbeddingFunction:
    """The offline ``HashingEmbedding``, whose instances are async callables."""
    return HashingEmbedding(dimension)
