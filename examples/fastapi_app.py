"""A FastAPI app on memora-ogm's async facade (``docs/fastapi.md`` builds it step by step).

    export NEO4J_URI=bolt://localhost:7687 NEO4J_PASSWORD=... QDRANT_URL=http://localhost:6333
    memora-ogm setup --qdrant-url "$QDRANT_URL"     # once: constraints, indexes, collection
    uvicorn fastapi_app:app --workers 2

Settings are the ``NEO4J_*``/``QDRANT_*`` environment variables. The lifespan opens the
facade in each worker and closes it at shutdown; views get it by ``Depends(get_interface)``.
Several workers must share one vector store, a Qdrant server (``QDRANT_URL``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from memora_ogm import Neo4jGraphInterface
from memora_ogm.contrib.fastapi import get_interface, lifespan
from memora_ogm.errors import NotFoundError
from memora_ogm.schema.models import Agent, Interaction, Memory, Organization, User
from memora_ogm.schema.storage import MemoriesAndInteraction
from memora_ogm.vector_db.base import MemorySearchScope

app = FastAPI(title="memora-ogm example", lifespan=lifespan)
Memora = Annotated[Neo4jGraphInterface, Depends(get_interface)]


class NewOrganization(BaseModel):
    org_name: str


class NewAgent(BaseModel):
    agent_label: str


class NewUser(BaseModel):
    user_name: str


class Conversation(MemoriesAndInteraction):
    agent_id: str


class Saved(BaseModel):
    interaction_id: str
    created_at: str


class Found(Memory):
    score: float


@app.exception_handler(NotFoundError)
async def not_found(request: Request, error: NotFoundError) -> JSONResponse:
    return JSONResponse({"error": str(error)}, status_code=404)


@app.exception_handler(ValueError)
async def bad_request(request: Request, error: ValueError) -> JSONResponse:
    return JSONResponse({"error": str(error)}, status_code=400)


@app.post("/orgs", status_code=201)
async def create_organization(body: NewOrganization, memora: Memora) -> Organization:
    return await memora.create_organization(body.org_name)


@app.post("/orgs/{org_id}/agents", status_code=201)
async def create_agent(org_id: str, body: NewAgent, memora: Memora) -> Agent:
    return await memora.create_agent(org_id, body.agent_label)


@app.post("/orgs/{org_id}/users", status_code=201)
async def create_user(org_id: str, body: NewUser, memora: Memora) -> User:
    return await memora.create_user(org_id, body.user_name)


@app.get("/orgs/{org_id}/users/{user_id}")
async def get_user(org_id: str, user_id: str, memora: Memora) -> User:
    return await memora.get_user(org_id, user_id)


@app.post("/orgs/{org_id}/users/{user_id}/interactions", status_code=201)
async def save_interaction(org_id: str, user_id: str, body: Conversation, memora: Memora) -> Saved:
    conversation = MemoriesAndInteraction.model_validate(body.model_dump(exclude={"agent_id"}))
    interaction_id, created_at = await memora.save_interaction_with_memories(
        org_id, body.agent_id, user_id, conversation
    )
    return Saved(interaction_id=interaction_id, created_at=created_at.isoformat())


@app.get("/orgs/{org_id}/users/{user_id}/interactions")
async def list_interactions(
    org_id: str, user_id: str, memora: Memora, skip: int = 0, limit: int = 20
) -> list[Interaction]:
    return await memora.get_all_user_interactions(org_id, user_id, skip=skip, limit=limit)


@app.get("/orgs/{org_id}/users/{user_id}/memories")
async def list_memories(
    org_id: str, user_id: str, memora: Memora, skip: int = 0, limit: int = 20
) -> list[Memory]:
    return await memora.get_all_user_memories(org_id, user_id, skip=skip, limit=limit)


@app.get("/orgs/{org_id}/users/{user_id}/memories/search")
async def search_memories(org_id: str, user_id: str, q: str, memora: Memora) -> list[Found]:
    """The user's memories closest to ``q``, best first, each with its score."""
    store = memora.get_associated_vector_db()
    if store is None:
        raise HTTPException(404, "no vector store: set QDRANT_URL or QDRANT_PATH")
    found = await store.search_memory(q, MemorySearchScope.USER, org_id, user_id)
    return [Found(**memory.model_dump(), score=score) for memory, score in found]
