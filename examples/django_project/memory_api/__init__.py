"""A JSON API over Memora's graph: organisations, agents, users, conversations, memories."""
