"""A Flask API on memora-ogm's Flask extension (``docs/flask.md`` builds it step by step).

    export NEO4J_URI=bolt://localhost:7687 NEO4J_PASSWORD=... QDRANT_URL=http://localhost:6333
    flask --app flask_app memora-ogm setup            # once: constraints, indexes, collection
    flask --app flask_app run                         # or, in production:
    gunicorn --preload -w 4 "flask_app:create_app()"

Settings are ``MEMORA_OGM_*`` config keys, else the ``NEO4J_*``/``QDRANT_*`` environment
variables. Several workers must share one vector store, a Qdrant server (``QDRANT_URL``):
an embedded one (``QDRANT_PATH``) belongs to one process, such as ``flask run``.

The views are synchronous and use ``memora.interface``, this process's facade; the
timeline reads through the node classes, which in a request read the app's Neo4j.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Flask, Response, jsonify, request
from pydantic import BaseModel

from memora_ogm.contrib.flask import MemoraOGM
from memora_ogm.errors import NotFoundError, UserNotFound
from memora_ogm.nodes import Date, User
from memora_ogm.schema.storage import MemoriesAndInteraction
from memora_ogm.vector_db.base import MemorySearchScope

memora = MemoraOGM()
api = Blueprint("memora", __name__)
#: Items per page unless the query string says ``limit``.
PAGE_SIZE = 20


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config or {})
    memora.init_app(app)
    app.register_blueprint(api)
    return app


def as_json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def page() -> tuple[int, int]:
    """``skip`` and ``limit`` from the query string; a non-integer is a 400 like any ValueError."""
    return int(request.args.get("skip", 0)), int(request.args.get("limit", PAGE_SIZE))


@api.errorhandler(NotFoundError)
def not_found(error: NotFoundError) -> tuple[Response, int]:
    return jsonify(error=str(error)), 404


@api.errorhandler(ValueError)
@api.errorhandler(KeyError)  # a field missing from the JSON body
def bad_request(error: ValueError | KeyError) -> tuple[Response, int]:
    return jsonify(error=str(error)), 400


@api.post("/orgs")
def create_organization() -> tuple[Response, int]:
    org = memora.interface.create_organization(request.get_json()["org_name"])
    return jsonify(as_json(org)), 201


@api.post("/orgs/<org_id>/agents")
def create_agent(org_id: str) -> tuple[Response, int]:
    agent = memora.interface.create_agent(org_id, request.get_json()["agent_label"])
    return jsonify(as_json(agent)), 201


@api.post("/orgs/<org_id>/users")
def create_user(org_id: str) -> tuple[Response, int]:
    user = memora.interface.create_user(org_id, request.get_json()["user_name"])
    return jsonify(as_json(user)), 201


@api.get("/orgs/<org_id>/users/<user_id>")
def get_user(org_id: str, user_id: str) -> Response:
    return jsonify(as_json(memora.interface.get_user(org_id, user_id)))


@api.delete("/orgs/<org_id>/users/<user_id>")
def delete_user(org_id: str, user_id: str) -> tuple[str, int]:
    memora.interface.delete_user(org_id, user_id)
    return "", 204


@api.post("/orgs/<org_id>/users/<user_id>/interactions")
def save_interaction(org_id: str, user_id: str) -> tuple[Response, int]:
    body = dict(request.get_json())
    agent_id = body.pop("agent_id")
    conversation = MemoriesAndInteraction.model_validate(body)
    interaction_id, created_at = memora.interface.save_interaction_with_memories(
        org_id, agent_id, user_id, conversation
    )
    return jsonify(interaction_id=interaction_id, created_at=created_at.isoformat()), 201


@api.get("/orgs/<org_id>/users/<user_id>/interactions")
def list_interactions(org_id: str, user_id: str) -> Response:
    skip, limit = page()
    interactions = memora.interface.get_all_user_interactions(
        org_id, user_id, skip=skip, limit=limit
    )
    return jsonify([as_json(interaction) for interaction in interactions])


@api.delete("/orgs/<org_id>/users/<user_id>/interactions/<interaction_id>")
def delete_interaction(org_id: str, user_id: str, interaction_id: str) -> tuple[str, int]:
    memora.interface.delete_user_interaction_and_its_memories(org_id, user_id, interaction_id)
    return "", 204


@api.get("/orgs/<org_id>/users/<user_id>/memories")
def list_memories(org_id: str, user_id: str) -> Response:
    skip, limit = page()
    agent_id = request.args.get("agent_id")
    memories = memora.interface.get_all_user_memories(
        org_id, user_id, agent_id, skip=skip, limit=limit
    )
    return jsonify([as_json(memory) for memory in memories])


@api.get("/orgs/<org_id>/users/<user_id>/memories/search")
def search_memories(org_id: str, user_id: str) -> Response:
    """The user's memories closest to ``q``, best first, each with its score (404 when the
    app has no vector store)."""
    store = memora.interface.get_associated_vector_db()
    if store is None:
        return jsonify(error="no vector store: set QDRANT_URL or QDRANT_PATH"), 404
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
