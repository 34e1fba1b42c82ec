"""The MCP server: Memora's memory as tools an agent calls, each held to its caller's tenant.

No tool takes an organisation, user or agent: over stdio they are the server's one
tenant (``--org``, ``--user``, ``--agent``), over HTTP the verified token's
(:mod:`memora_ogm.mcp.auth`). An id of another tenant's interaction or memory reads as
not found and deletes nothing, since every facade call names the caller's own keys.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount, Route

from memora_ogm import Neo4jGraphInterface
from memora_ogm._version import __version__
from memora_ogm.config import MemoraConfig
from memora_ogm.errors import NotFoundError
from memora_ogm.mcp import DEFAULT_LIMITS, Limits
from memora_ogm.mcp.auth import (
    DELETE,
    FORGET,
    READ,
    WRITE,
    ApiKeys,
    JwtVerifier,
    Tenant,
    TenantToken,
    TokenVerifier,
)
from memora_ogm.mcp.gate import Gate, metadata_url, resource_metadata
from memora_ogm.mcp.reasons import GraphAddress, field_errors, log, said
from memora_ogm.schema.models import Interaction, Memory
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.vector_db.scope import MemorySearchScope

T = TypeVar("T")

#: Results a search may ask for (the store is opened to return as many).
MAX_SEARCH = 50
#: Source messages each memory of an answer shows unless the call asks for more.
SOURCES = 3


def _within(count: int, most: int, what: str, option: str) -> None:
    if count > most:
        raise ToolError(f"{what}: {count}, at most {most} (the server's {option})")


def _sources_shown(memories: list[Memory], sources: int) -> list[Memory]:
    """Each memory with at most ``sources`` of its source messages."""
    return [
        m
        if m.message_sources is None or len(m.message_sources) <= sources
        else m.model_copy(update={"message_sources": m.message_sources[:sources]})
        for m in memories
    ]


def _memories_shown(interaction: Interaction, sources: int) -> Interaction:
    if not interaction.memories:
        return interaction
    shown = _sources_shown(interaction.memories, sources)
    return interaction.model_copy(update={"memories": shown})


def _saved_within(limits: Limits, messages: list[Message], memories: list[MemoryToStore]) -> None:
    """A save's sizes, each refused by its path."""
    _within(len(messages), limits.messages, "messages", "--max-messages")
    for number, message in enumerate(messages):
        _within(len(message.content), limits.text, f"messages[{number}].content", "--max-text")
    for number, memory in enumerate(memories):
        field = f"memories[{number}]"
        _within(len(memory.memory), limits.text, f"{field}.memory", "--max-text")
        count = len(memory.source_msg_block_pos)
        _within(count, limits.messages, f"{field}.source_msg_block_pos", "--max-messages")


INSTRUCTIONS = (
    "Long-term memory of the user you talk with. Save each conversation with what you "
    "learnt from it (save_interaction), and look up what you know before you answer "
    "(search_memories, get_memories). Memory text names people as user_<id> and "
    "agent_<id>; reads give them back with their names."
)

READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
SAVES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
#: A second delete of the same id is a "not found" error, so deletes are not idempotent.
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


class Message(BaseModel):
    role: str = Field(description="Who said it: user, assistant, tool, ...")
    content: str = Field(description="What was said.")


class Saved(BaseModel):
    interaction_id: str = Field(description="The new interaction's id.")
    created_at: datetime = Field(description="When it was saved.")


class Hit(BaseModel):
    memory: Memory
    score: float = Field(description="Similarity to the query (higher is closer).")


class Hits(BaseModel):
    hits: list[Hit] = Field(description="The closest memories, best first.")


class Memories(BaseModel):
    memories: list[Memory]


class Interactions(BaseModel):
    interactions: list[Interaction]


class Deleted(BaseModel):
    deleted: str = Field(description="The id of what was deleted.")


def caller(tenant: Tenant | None, *scopes: str) -> Tenant:
    """The calling tenant, if it holds every one of ``scopes``: the token's over HTTP,
    else the server's own one."""
    token = get_access_token()
    if isinstance(token, TenantToken):
        tenant = token.tenant()
    if tenant is None:
        raise ToolError("no tenant: call with a token that names one")
    for scope in scopes:
        if scope not in tenant.scopes:
            raise ToolError(f"this tool needs the scope {scope!r}, which the token lacks")
    return tenant


async def answered(call: Awaitable[T]) -> T:
    """A facade call's result, its refusals as tool errors an agent can act on."""
    try:
        return await call
    except NotFoundError as error:
        missing = next(reversed(error.ids.values()), "")
        raise ToolError(f"not found: {error.what} {missing!r}") from None
    except ValidationError as error:  # bad input: nothing was written
        raise ToolError(field_errors(error)) from None
    except (ValueError, TypeError) as error:
        raise ToolError(str(error)) from None


def compact(content: Any) -> str:
    """Structured content as its text block: complete (a client may read only the text),
    without indentation (it doubles the answer's size at most)."""
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


class MemoryServer(MCPServer):
    """The SDK's server, each tool error said in the caller's terms (:mod:`.reasons`) and
    each answer's text block the compact copy of its structured content."""

    def __init__(self, graph: GraphAddress, **settings: Any) -> None:
        super().__init__(**settings)
        self.graph = graph

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            result = await super().call_tool(name, arguments, context)
        except MCPError:
            raise
        except ToolError as error:
            # Our own refusals keep their text; the SDK's wrapping ("Error executing
            # tool ...", pydantic's report) and everything unforeseen are said again.
            cause = error.__cause__
            if cause is None or (isinstance(cause, ToolError) and cause.__cause__ is None):
                raise ToolError(str(cause or error)) from None
            raise ToolError(said(cause, self.graph)) from None
        if isinstance(result, CallToolResult) and result.structured_content is not None:
            result.content = [TextContent(type="text", text=compact(result.structured_content))]
        return result


def build_server(
    memora: Neo4jGraphInterface,
    tenant: Tenant | None = None,
    *,
    graph: GraphAddress | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> MCPServer:
    """The MCP server over ``memora`` (and its vector store, for search): ``tenant`` for
    stdio and in-process use, none over HTTP (each call's comes from its token, checked
    by :class:`~memora_ogm.mcp.gate.Gate`); ``graph`` is what its errors name (by
    default the facade's URI, its user unnamed)."""
    graph = graph or GraphAddress(memora.graph.uri or "neomodel's connection", "(the configured)")
    server = MemoryServer(
        graph,
        name="memora-ogm",
        version=__version__,
        instructions=INSTRUCTIONS,
        # The SDK configures the root logger at this level: a call's own lines (a tool
        # refused, a save logged) would flood a server's output.
        log_level="WARNING",
    )

    def tool(hints: ToolAnnotations) -> Callable[[Callable[..., Any]], Any]:
        """A tool, its description its docstring without the source's indentation."""

        def register(function: Callable[..., Any]) -> Any:
            description = inspect.cleandoc(function.__doc__ or "")
            return server.tool(annotations=hints, description=description)(function)

        return register

    @tool(SAVES)
    async def save_interaction(
        messages: Annotated[list[Message], Field(min_length=1, description="The conversation.")],
        memories: Annotated[
            list[MemoryToStore], Field(description="What was learnt, with source positions.")
        ] = [],  # noqa: B006 - the SDK copies arguments from the request
        contrary_memories: Annotated[
            list[ContraryMemoryToStore],
            Field(description="What was learnt that supersedes a memory (by its id)."),
        ] = [],  # noqa: B006
    ) -> Saved:
        """Save a conversation and the memories learnt from it. Each memory names the
        0-based positions of the messages it came from; a contrary memory also names the
        memory_id it supersedes (that memory then shows in get_memory_history). Needs
        memory:write."""
        who = caller(tenant, WRITE)
        _saved_within(limits, messages, [*memories, *contrary_memories])
        # Checked once, by the save: the SDK checked the types.
        data = MemoriesAndInteraction.model_construct(
            interaction=[message.model_dump() for message in messages],
            memories=memories,
            contrary_memories=contrary_memories,
        )
        saved = await answered(
            memora.save_interaction_with_memories(who.org_id, who.agent_id, who.user_id, data)
        )
        return Saved(interaction_id=saved[0], created_at=saved[1])

    @tool(READS)
    async def search_memories(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        limit: Annotated[int, Field(ge=1, le=MAX_SEARCH)] = 10,
        sources: Annotated[int, Field(ge=0)] = SOURCES,
    ) -> Hits:
        """The user's memories closest in meaning to the query, best first (hybrid
        search of the vector store), each with at most `sources` of its source messages.
        Needs memory:read."""
        who = caller(tenant, READ)
        _within(len(query), limits.query, "query", "--max-query")
        store = memora.associated_vector_db
        if store is None:
            raise ToolError(
                "search needs a vector store, and none is attached: start memora-ogm mcp "
                "with --qdrant-path DIR or --qdrant-url URL (or set QDRANT_PATH / QDRANT_URL)"
            )
        found = await answered(
            store.search_memory(query, MemorySearchScope.USER, who.org_id, user_id=who.user_id)
        )
        keys = [
            {"org_id": who.org_id, "user_id": who.user_id, "memory_id": m.memory_id}
            for m, _ in found
        ]
        resolved = {
            m.memory_id: m for m in await answered(memora.fetch_user_memories_resolved(keys))
        }
        kept = [(resolved[m.memory_id], score) for m, score in found if m.memory_id in resolved]
        shown = _sources_shown([memory for memory, _ in kept[:limit]], sources)
        hits = [Hit(memory=m, score=score) for m, (_, score) in zip(shown, kept, strict=False)]
        return Hits(hits=hits)

    @tool(READS)
    async def get_memories(
        skip: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1)] = 20,
        sources: Annotated[int, Field(ge=0)] = SOURCES,
    ) -> Memories:
        """The user's memories, newest first, with people's names in place, each with at
        most `sources` of its source messages (get_interaction has them all); the next
        page is skip=skip+limit. Needs memory:read."""
        who = caller(tenant, READ)
        _within(limit, limits.page, "limit", "--max-page")
        found = await answered(
            memora.get_all_user_memories(who.org_id, who.user_id, skip=skip, limit=limit)
        )
        return Memories(memories=_sources_shown(found, sources))

    @tool(READS)
    async def get_interactions(
        skip: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1)] = 10,
        sources: Annotated[int, Field(ge=0)] = SOURCES,
    ) -> Interactions:
        """The user's conversations, most recently updated first, with their messages and
        memories (each with at most `sources` of its source messages); the next page is
        skip=skip+limit. Needs memory:read."""
        who = caller(tenant, READ)
        _within(limit, limits.page, "limit", "--max-page")
        found = await answered(
            memora.get_all_user_interactions(who.org_id, who.user_id, skip=skip, limit=limit)
        )
        return Interactions(interactions=[_memories_shown(i, sources) for i in found])

    @tool(READS)
    async def get_interaction(
        interaction_id: str, sources: Annotated[int, Field(ge=0)] = SOURCES
    ) -> Interaction:
        """One conversation with all its messages, and its memories (each with at most
        `sources` of its source messages, which are among the messages). Needs
        memory:read."""
        who = caller(tenant, READ)
        found = await answered(memora.get_interaction(who.org_id, who.user_id, interaction_id))
        return _memories_shown(found, sources)

    @tool(READS)
    async def get_memory_history(
        memory_id: str, sources: Annotated[int, Field(ge=0)] = SOURCES
    ) -> Memories:
        """The memory and those it superseded, newest first: how what is known changed
        (each with at most `sources` of its source messages). Needs memory:read."""
        who = caller(tenant, READ)
        found = await answered(memora.get_user_memory_history(who.org_id, who.user_id, memory_id))
        return Memories(memories=_sources_shown(found, sources))

    @tool(DELETES)
    async def delete_memory(memory_id: str) -> Deleted:
        """Delete one memory (and its point in the vector store). Needs memory:delete."""
        who = caller(tenant, DELETE)
        await answered(memora.delete_user_memory(who.org_id, who.user_id, memory_id))
        return Deleted(deleted=memory_id)

    @tool(DELETES)
    async def delete_interaction(interaction_id: str) -> Deleted:
        """Delete a conversation with its messages and the memories learnt from it.
        Needs memory:delete."""
        who = caller(tenant, DELETE)
        await answered(
            memora.delete_user_interaction_and_its_memories(who.org_id, who.user_id, interaction_id)
        )
        return Deleted(deleted=interaction_id)

    @tool(DELETES)
    async def forget_user() -> Deleted:
        """Erase the user: every conversation, memory and vector of theirs, and the user
        itself. It cannot be undone. Needs memory:delete and memory:forget."""
        who = caller(tenant, DELETE, FORGET)
        await answered(memora.delete_user(who.org_id, who.user_id))
        return Deleted(deleted=who.user_id)

    return server


# ----------------------------------------------------------------------- over HTTP


@dataclass(frozen=True)
class HttpSettings:
    """How ``memora-ogm mcp --http`` serves."""

    host: str
    port: int
    #: The URL clients reach the MCP endpoint at (the tokens' audience).
    resource_url: str
    #: The identity provider that signs the JWTs (their ``iss``).
    issuer: str | None = None
    jwks_url: str | None = None
    public_key_file: str | None = None
    api_keys_file: str | None = None
    rate: float | None = None
    #: ``Host`` headers accepted besides the resource URL's (a reverse proxy's).
    allowed_hosts: list[str] = field(default_factory=list)
    #: How much the server logs: ``debug``, ``info`` (a line per request), ``warning``...
    log_level: str = "info"
    limits: Limits = field(default_factory=Limits)

    def verifier(self) -> TokenVerifier:
        jwts = None
        if self.jwks_url or self.public_key_file:
            if not self.issuer:
                raise ValueError("JWTs need their issuer: --issuer URL")
            key = None
            if self.public_key_file:
                with open(self.public_key_file, encoding="utf-8") as file:
                    key = file.read()
            jwts = JwtVerifier(
                self.issuer, self.resource_url, jwks_url=self.jwks_url, public_key=key
            )
        keys = ApiKeys(self.api_keys_file) if self.api_keys_file else None
        return TokenVerifier(jwts, keys)

    def security(self) -> TransportSecuritySettings:
        own = urlsplit(self.resource_url).netloc
        hosts = [own, f"{self.host}:{self.port}", "127.0.0.1:*", "localhost:*", *self.allowed_hosts]
        origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )


#: Bytes from which an answer is sent gzip-compressed to a client that accepts it.
COMPRESSED_FROM = 1024


def http_app(
    memora: Neo4jGraphInterface,
    settings: HttpSettings,
    graph: GraphAddress,
    set_up: bool = True,
) -> Starlette:
    """The ASGI app of the Streamable HTTP endpoint (``/mcp``, stateless, so any worker
    serves any call), with its protected-resource metadata; sets ``memora`` up at start
    unless told it was (``set_up``), and closes it at shutdown."""
    server = build_server(memora, graph=graph, limits=settings.limits)
    path = urlsplit(settings.resource_url).path.rstrip("/") or "/mcp"
    endpoint = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        transport_security=settings.security(),
        host=settings.host,
    )
    jwt_issuer = settings.issuer if settings.jwks_url or settings.public_key_file else None
    metadata = Route(
        urlsplit(metadata_url(settings.resource_url)).path,
        resource_metadata(settings.resource_url, jwt_issuer),
        methods=["GET", "OPTIONS"],
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run(), serving(memora, graph, set_up=set_up):
            yield

    gate = Middleware(
        Gate,
        path=path,
        verifier=settings.verifier(),
        resource_url=settings.resource_url,
        rate=settings.rate,
    )
    # An answer carries its structured content twice (the text block is its copy, for
    # clients that read only text): compressed, the copy costs little on the wire.
    compressed = Middleware(GZipMiddleware, minimum_size=COMPRESSED_FROM, compresslevel=6)
    return Starlette(
        routes=[metadata, Mount("/", app=endpoint)],
        middleware=[compressed, gate],
        lifespan=lifespan,
    )


def served_app(config: MemoraConfig, settings: HttpSettings) -> Starlette:
    """uvicorn's factory, called in each worker: the app with the worker's own facade,
    which the server set up before it started any worker."""
    graph = GraphAddress(config.neo4j.uri, config.neo4j.username)
    return http_app(open_facade(config), settings, graph, set_up=False)


def configure_log(level: str) -> None:
    """The server's own lines (:data:`memora_ogm.mcp.reasons.log`) on stderr at ``level``."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s memora-ogm mcp[%(process)d] %(levelname)s %(message)s")
    )
    log.handlers[:] = [handler]
    log.setLevel(level.upper())
    log.propagate = False


def open_facade(config: MemoraConfig) -> Neo4jGraphInterface:
    """The async facade of ``config``, its store able to return a
    search's largest page."""
    from memora_ogm.vector_db.qdrant import QdrantDB

    store = (
        QdrantDB(**config.store_options(), search_limit=MAX_SEARCH)
        if config.has_vector_store
        else None
    )
    return Neo4jGraphInterface.from_connection(config.neo4j, store)


#: Turns a start-up failure into what the server says before it exits.
Refusal = Callable[[BaseException, GraphAddress], Exception]


@contextlib.asynccontextmanager
async def serving(
    memora: Neo4jGraphInterface,
    graph: GraphAddress,
    ready: Refusal | None = None,
    set_up: bool = True,
) -> AsyncIterator[None]:
    """``memora`` ready to serve, closed with its store afterwards: ``setup()`` first unless
    done already (idempotent: the constraints, the store's collection, and pending vector
    changes settled), its failure raised as ``ready`` makes it."""
    try:
        try:
            if set_up:
                await memora.setup()
        except Exception as error:
            if ready is None:
                raise
            raise ready(error, graph) from None
        yield
    finally:
        await memora.close()
        store = memora.associated_vector_db
        if store is not None:
            await store.close()


async def serve_stdio(
    memora: Neo4jGraphInterface,
    tenant: Tenant,
    graph: GraphAddress,
    ready: Refusal | None = None,
    started: str = "serving stdio",
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Serve one desktop client over stdin and stdout as ``tenant``; log ``started``
    once ready."""
    async with serving(memora, graph, ready):
        log.info(started)
        await build_server(memora, tenant, graph=graph, limits=limits).run_stdio_async()
