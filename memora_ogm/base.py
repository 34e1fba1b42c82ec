"""``BaseGraphDB``, the async interface Memora programs against, method for method.

Defined in ``memora_ogm._async.base``, from which ``memora_ogm._sync.base`` (the base of
the sync facade, exported by :mod:`memora_ogm.sync`) is generated.

Names, parameters, defaults and return types are those of Memora's ``BaseGraphDB`` so that
``Neo4jGraphInterface`` is a drop-in replacement. Conventions shared by every method:

- ids are non-empty strings; bad arguments raise ``ValueError`` (``TypeError`` in
  ``create_organization``, ``get_organization`` and ``delete_organization``, as in Memora);
- a missing organisation, user, agent, interaction or memory raises an error that is a
  ``neo4j.exceptions.Neo4jError``, so code written for Memora keeps catching it;
- a failed call writes nothing, to the graph or to the associated vector store;
- memory texts are returned with their ``user_<id>``/``agent_<id>`` placeholders replaced
  by the user's name and the agent's label.
"""

from memora_ogm._async.base import BaseGraphDB as BaseGraphDB
