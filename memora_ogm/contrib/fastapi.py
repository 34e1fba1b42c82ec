"""FastAPI: a lifespan that holds the app's async facade, and the dependency ``get_interface``.

    from fastapi import Depends, FastAPI
    from memora_ogm.contrib.fastapi import get_interface, lifespan

    app = FastAPI(lifespan=lifespan)

    @app.get("/orgs/{org_id}")
    async def organization(org_id: str, memora=Depends(get_interface)):
        return await memora.get_organization(org_id)

Settings are the environment variables of :data:`~memora_ogm.config.NAMES`. The
facade opens as the app starts, in each worker, and closes with its vector store as it
shuts down. An app with a lifespan of its own passes ``lifespan=memora_lifespan(own)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from memora_ogm.config import MemoraConfig, close_async

if TYPE_CHECKING:
    from memora_ogm import Neo4jGraphInterface

#: The facade's name in the lifespan state (``request.state``).
STATE_KEY = "memora_ogm"
#: An app's own lifespan, as ``FastAPI(lifespan=...)`` takes it.
Lifespan = Callable[[Any], AbstractAsyncContextManager[Mapping[str, Any] | None]]
#: memora-ogm's lifespan: it always yields a state (the facade's, with the app's own).
StateLifespan = Callable[[Any], AbstractAsyncContextManager[dict[str, Any]]]


def memora_lifespan(
    own: Lifespan | None = None, settings: Mapping[str, Any] | None = None
) -> StateLifespan:
    """A lifespan that opens the facade (from ``settings``, else the environment) around
    ``own``, which may use it as ``app.state.memora_ogm``; ``own``'s state reaches the
    requests too."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
        memora = MemoraConfig.from_settings(settings or {}).open_async()
        app.state.memora_ogm = memora
        try:
            if own is None:
                yield {STATE_KEY: memora}
                return
            async with own(app) as state:
                yield {**(state or {}), STATE_KEY: memora}
        finally:
            await close_async(memora)

    return lifespan


#: The lifespan for an app without one of its own: ``FastAPI(lifespan=lifespan)``.
lifespan = memora_lifespan()


def get_interface(request: Request) -> Neo4jGraphInterface:
    """The app's async facade, for ``Depends(get_interface)``."""
    memora: Neo4jGraphInterface | None = getattr(request.state, STATE_KEY, None)
    if memora is None:
        raise RuntimeError(
            "memora-ogm's lifespan is not running for this app: create it with "
            "FastAPI(lifespan=memora_ogm.contrib.fastapi.lifespan), or "
            "lifespan=memora_lifespan(your_lifespan)"
        )
    return memora
