"""JSON views on this process's facade; a missing object is a 404 and bad input a 400."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from pydantic import BaseModel

from memora_ogm.contrib.django import get_interface
from memora_ogm.errors import NotFoundError, UserNotFound
from memora_ogm.nodes import Date, User
from memora_ogm.schema.storage import MemoriesAndInteraction

View = Callable[..., HttpResponse]
#: Items per page unless the query string says ``limit``.
PAGE_SIZE = 20


def api(*methods: str) -> Callable[[View], View]:
    """A JSON endpoint for ``methods`` that maps memora-ogm's errors to HTTP statuses.

    No CSRF middleware is installed: this is a JSON API for other programs.
    """

    def decorate(view: View) -> View:
        @wraps(view)
        def endpoint(request: HttpRequest, **kwargs: str) -> HttpResponse:
            if request.method not in methods:
                return HttpResponseNotAllowed(methods)
            try:
                return view(request, **kwargs)
            except NotFoundError as error:
                return JsonResponse({"error": str(error)}, status=404)
            except (ValueError, KeyError) as error:  # KeyError: a field missing from the body
                return JsonResponse({"error": str(error)}, status=400)

        return endpoint

    return decorate


def body(request: HttpRequest) -> dict[str, Any]:
    data = json.loads(request.body)
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    return data


def as_json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def page(request: HttpRequest, default_limit: int = PAGE_SIZE) -> tuple[int, int]:
    """``skip`` and ``limit`` from the query string; a non-integer is a 400 like any ValueError."""
    return int(request.GET.get("skip", 0)), int(request.GET.get("limit", default_limit))


@api("POST")
def organizations(request: HttpRequest) -> HttpResponse:
    org = get_interface().create_organization(body(request)["org_name"])
    return JsonResponse(as_json(org), status=201)


@api("POST")
def agents(request: HttpRequest, org_id: str) -> HttpResponse:
    agent = get_interface().create_agent(org_id, body(request)["agent_label"])
    return JsonResponse(as_json(agent), status=201)


@api("POST")
def users(request: HttpRequest, org_id: str) -> HttpResponse:
    user = get_interface().create_user(org_id, body(request)["user_name"])
    return JsonResponse(as_json(user), status=201)


@api("GET", "DELETE")
def user(request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
    if request.method == "DELETE":
        get_interface().delete_user(org_id, user_id)
        return HttpResponse(status=204)
    return JsonResponse(as_json(get_interface().get_user(org_id, user_id)))


@api("GET", "POST")
def interactions(request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
    if request.method == "POST":
        data = body(request)
        agent_id = data.pop("agent_id")
        interaction_id, created_at = get_interface().save_interaction_with_memories(
            org_id, agent_id, user_id, MemoriesAndInteraction.model_validate(data)
        )
        return JsonResponse(
            {"interaction_id": interaction_id, "created_at": created_at.isoformat()}, status=201
        )
    skip, limit = page(request)
    found = get_interface().get_all_user_interactions(org_id, user_id, skip=skip, limit=limit)
    return JsonResponse([as_json(interaction) for interaction in found], safe=False)


@api("DELETE")
def interaction(
    request: HttpRequest, org_id: str, user_id: str, interaction_id: str
) -> HttpResponse:
    get_interface().delete_user_interaction_and_its_memories(org_id, user_id, interaction_id)
    return HttpResponse(status=204)


@api("GET")
def memories(request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
    skip, limit = page(request)
    agent_id = request.GET.get("agent_id")
    found = get_interface().get_all_user_memories(org_id, user_id, agent_id, skip=skip, limit=limit)
    return JsonResponse([as_json(memory) for memory in found], safe=False)


@api("GET")
def timeline(request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
    """The days the user talked on, newest first, each with its interactions: read through
    the node classes on neomodel's connection (which the app points at ``MEMORA_OGM``'s
    server), ``Date`` traversed along ``interactions``."""
    if User.nodes.get_or_none(org_id=org_id, user_id=user_id) is None:
        raise UserNotFound(org_id, user_id)
    days = Date.nodes.filter(org_id=org_id, user_id=user_id).order_by("-date")
    interactions: dict[str, list[str]] = {}
    # neomodel annotates each path as a tuple of strings; it takes a "rel__rel" string.
    for day, interaction, _ in days.traverse("interactions").all():  # type: ignore[arg-type]
        interactions.setdefault(day.date.isoformat(), []).append(interaction.interaction_id)
    found = [{"date": day, "interactions": sorted(ids)} for day, ids in interactions.items()]
    return JsonResponse(found, safe=False)
