"""A Flask API over memora-ogm's synchronous interface.

    flask --app "examples.flask_app:create_app()" run   # with NEO4J_URI & co. in the environment
    gunicorn --preload -w 4 "examples.flask_app:create_app()"   # with QDRANT_URL too

Flask views are synchronous, so the app uses ``memora_ogm.sync``; the interface is
built once per application (it holds the Neo4j driver) and shared by all requests.

The vector store: with ``QDRANT_URL`` set, a Qdrant server, which is what several
worker processes need (gunicorn, uWSGI, with or without ``--preload``). Every worker must
find the memories every other worker saved, and only a server they share holds them all;
each worker opens its own connections to it, also when the app was built in the master
before the fork. Without ``QDRANT_URL`` the store is embedded (``QDRANT_LOCATION``, in
memory by default): for one process, such as ``flask run`` or the tests. An embedded store
lives inside its process, so several workers would each hold a private part of the
memories, and searches would answer depending on which worker took the request; built
before a fork, it refuses the workers' writes (``InheritedEmbeddedStoreError``) rather
than let that happen.

Next to it, views may read the graph through the node classes (``memora_ogm.nodes``)
on the application's own neomodel connection, configured as django_neomodel does it:
``NEOMODEL_NEO4J_BOLT_URL`` becomes neomodel's ``database_url``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from neomodel import get_config
from pydantic import BaseModel

from memora_ogm.errors import NotFoundError, UserNotFound
from memora_ogm.nodes import Date, User
from memora_ogm.schema.storage import MemoriesAndInteraction
from memora_ogm.sync import Neo4jGraphInterface, QdrantDB
from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import HashingEmbedding

api = Blueprint("memora", __name__)
#: Items per page unless the query string says ``limit``.
PAGE_SIZE = 20


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.from_mapping(
        NEO4J_URI=os.environ.get("NEO4J_URI", "bolt://localhost:7687"),
        NEO4J_USERNAME=os.environ.get("NEO4J_USERNAME", "neo4j"),
        NEO4J_PASSWORD=os.environ.get("NEO4J_PASSWORD", ""),
        NEO4J_DATABASE=os.environ.get("NEO4J_DATABASE", "neo4j"),
        QDRANT_URL=os.environ.get("QDRANT_URL"),
        QDRANT_API_KEY=os.environ.get("QDRANT_API_KEY"),
        NEOMODEL_NEO4J_BOLT_URL=os.environ.get(
            "NEOMODEL_NEO4J_BOLT_URL", "bolt://neo4j:password@localhost:7687"
        ),
        QDRANT_LOCATION=":memory:",
    )
    app.config.update(config or {})
    get_config().database_url = app.config["NEOMODEL_NEO4J_BOLT_URL"]
    memora = Neo4jGraphInterface(
        app.config["NEO4J_URI"],
        app.config["NEO4J_USERNAME"],
        app.config["NEO4J_PASSWORD"],
        app.config["NEO4J_DATABASE"],
        associated_vector_db=vector_store(app.config),
    )
    memora.setup()  # idempotent: constraints and the vector collection
    app.extensions["memora"] = memora
    app.register_blueprint(api)
    return app


def vector_store(config: Mapping[str, Any]) -> QdrantDB:
    """A Qdrant server when ``QDRANT_URL`` is set (several processes), else embedded.

    Embedded by the offline feature hashing, so the example runs where no model can be
    downloaded; without ``embedding_function`` it embeds with Memora's models.
    """
    if config["QDRANT_URL"]:
        return QdrantDB(
            url=config["QDRANT_URL"],
            api_key=config["QDRANT_API_KEY"],
            embedding_function=HashingEmbedding(),
        )
    return QdrantDB(location=config["QDRANT_LOCATION"], embedding_function=HashingEmbedding())


def memora() -> Neo4jGraphInterface:
    interface: Neo4jGraphInterface = current_app.extensions["memora"]
    return interface


def as_json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def page(default_limit: int = PAGE_SIZE) -> tuple[int, int]:
    """``skip`` and ``limit`` from the query string; a non-integer is a 400 like any ValueError."""
    return int(request.args.get("skip", 0)), int(request.args.get("limit", default_limit))


@api.errorhandler(NotFoundError)
def not_found(error: NotFoundError) -> tuple[Response, int]:
    return jsonify(error=str(error)), 404


@api.errorhandler(ValueError)
@api.errorhandler(KeyError)  # a field missing from the JSON body
def bad_request(error: ValueError | KeyError) -> tuple[Response, int]:
    return jsonify(error=str(error)), 400


@api.post("/orgs")
def create_organization() -> tuple[Response, int]:
    org = memora().create_organization(request.get_json()["org_name"])
    return jsonify(as_json(org)), 201


@api.post("/orgs/<org_id>/agents")
def create_agent(org_id: str) -> tuple[Response, int]:
    agent = memora().create_agent(org_id, request.get_json()["agent_label"])
    return jsonify(as_json(agent)), 201


@api.post("/orgs/<org_id>/users")
def create_user(org_id: str) -> tuple[Response, int]:
    user = memora().create_user(org_id, request.get_json()["user_name"])
    return jsonify(as_json(user)), 201


@api.get("/orgs/<org_id>/users/<user_id>")
def get_user(org_id: str, user_id: str) -> Response:
    return jsonify(as_json(memora().get_user(org_id, user_id)))


@api.delete("/orgs/<org_id>/users/<user_id>")
def delete_user(org_id: str, user_id: str) -> tuple[str, int]:
    memora().delete_user(org_id, user_id)
    return "", 204


@api.post("/orgs/<org_id>/users/<user_id>/interactions")
def save_interaction(org_id: str, user_id: str) -> tuple[Response, int]:
    body = dict(request.get_json())
    agent_id = body.pop("agent_id")
    conversation = MemoriesAndInteraction.model_validate(body)
    interaction_id, created_at = memora().save_interaction_with_memories(
        org_id, agent_id, user_id, conversation
    )
    return jsonify(interaction_id=interaction_id, created_at=created_at.isoformat()), 201


@api.get("/orgs/<org_id>/users/<user_id>/interactions")
def list_interactions(org_id: str, user_id: str) -> Response:
    skip, limit = page()
    interactions = memora().get_all_user_interactions(org_id, user_id, skip=skip, limit=limit)
    return jsonify([as_json(interaction) for interaction in interactions])


@api.delete("/orgs/<org_id>/users/<user_id>/interactions/<interaction_id>")
def delete_interaction(org_id: str, user_id: str, interaction_id: str) -> tuple[str, int]:
    memora().delete_user_interaction_and_its_memories(org_id, user_id, interaction_id)
    return "", 204


@api.get("/orgs/<org_id>/users/<user_id>/memories")
def list_memories(org_id: str, user_id: str) -> Response:
    skip, limit = page()
    agent_id = request.args.get("agent_id")
    memories = memora().get_all_user_memories(org_id, user_id, agent_id, skip=skip, limit=limit)
    return jsonify([as_json(memory) for memory in memories])


@api.get("/orgs/<org_id>/users/<user_id>/memories/search")
def search_memories(org_id: str, user_id: str) -> Response:
    """The user's memories closest to ``q``, best first, each with its score."""
    store = memora().get_associated_vector_db()
    assert store is not None  # create_app always attaches one
    found = store.search_memory(request.args["q"], MemorySearchScope.USER, org_id, user_id)
    return jsonify([{**as_json(memory), "score": score} for memory, score in found])


@api.get("/orgs/<org_id>/users/<user_id>/timeline")
def timeline(org_id: str, user_id: str) -> Response:
    """The days the user talked on, newest first, each with its interactions: read through
    the node classes, ``Date`` traversed along ``interactions`` (``HAS_OCCURRENCE_ON``)."""
    if User.nodes.get_or_none(org_id=org_id, user_id=user_id) is None:
        raise UserNotFound(org_id, user_id)
    days = Date.nodes.filter(org_id=org_id, user_id=user_id).order_by("-date")
    interactions: dict[str, list[str]] = {}
    # neomodel annotates each path as a tuple of strings; it takes a "rel__rel" string.
    for day, interaction, _ in days.traverse("interactions").all():  # type: ignore[arg-type]
        interactions.setdefault(day.date.isoformat(), []).append(interaction.interaction_id)
    return jsonify(
        [{"date": day, "interactions": sorted(ids)} for day, ids in interactions.items()]
    )
