"""Memora's graph in Django's admin: organisations, their users and agents, a user's
memories (with their history), interactions and picture, and the actions an operator
needs (delete a memory or an interaction, erase a user, export a user).

The unmanaged :class:`~memora_ogm.contrib.django.models.MemoryGraph` anchors it: its
``ModelAdmin`` serves only the views below, each wrapped in ``admin_site.admin_view``,
so it works on any ``AdminSite`` (``site.register(MemoryGraph, MemoryGraphAdmin)``).
Every read goes through the facade or a declared call (:mod:`memora_ogm.calls.browse`),
a page at a time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django.contrib import admin, messages
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html_join
from django.utils.http import RFC3986_SUBDELIMS
from django.views.decorators.http import require_GET, require_POST
from neo4j.exceptions import DriverError, Neo4jError

from memora_ogm.calls import browse
from memora_ogm.config import ConfigurationError
from memora_ogm.contrib.django.conf import (
    DEFAULT,
    SETTING,
    databases,
    memora_config,
    setting_name,
)
from memora_ogm.contrib.django.interfaces import get_interface
from memora_ogm.contrib.django.models import MemoryGraph
from memora_ogm.contrib.django.templatetags.memora_admin import moment
from memora_ogm.errors import NotFoundError, RetriesExhausted
from memora_ogm.schema import models
from memora_ogm.transfer.format import dumps
from memora_ogm.vector_db.scope import MemorySearchScope

if TYPE_CHECKING:
    from memora_ogm import sync

#: Rows per page: organisations, users, agents, memories; interactions.
PER_PAGE, INTERACTIONS_PER_PAGE = 50, 20
#: The permission that erases a user (``view`` and ``delete`` are Django's own).
ERASE_USER = "erase_user"

View = Callable[..., HttpResponse]
#: The last id a row's URL is reversed with, then replaced by each row's (``_urls``).
ROW = "-row-"


@dataclass(frozen=True)
class Pages:
    """The page a request asks for (``?<param>=N``, from 1), read before the total is
    known (the page's statement counts too), and the links to the others."""

    request: HttpRequest
    param: str
    per_page: int

    @property
    def number(self) -> int:
        try:
            return max(1, int(self.request.GET.get(self.param, "1")))
        except ValueError:
            return 1

    @property
    def skip(self) -> int:
        return (self.number - 1) * self.per_page

    def links(self, total: int | None, shown: int = 0) -> list[tuple[int | None, str]]:
        """Links to the pages around this one and the last (``total`` None when unknown:
        a next page while this one is full); None is a gap."""
        number = self.number
        if total is None:
            last = number + 1 if shown >= self.per_page else number
        else:
            last = max(1, math.ceil(total / self.per_page), number)
        pages = sorted({1, last, *range(max(1, number - 2), min(last, number + 2) + 1)})
        found: list[tuple[int | None, str]] = []
        for page in pages:
            if found and page - (found[-1][0] or 0) > 1:
                found.append((None, ""))
            found.append((page, "?" + urlencode({**self.request.GET.dict(), self.param: page})))
        return found


# A user's page's rows, built as Django's changelist builds its cells (format_html): in
# the template, 70 rows took most of the page's rendering (benchmarks/bench_admin.py).
MEMORY_ROW = (
    '<tr><th><a href="{}" class="memora-memory{}">{}</a></th><td>{}</td><td>{}</td><td>{}</td></tr>'
)
INTERACTION_ROW = '<tr><th><a href="{}">{}</a></th><td>{}</td><td>{}</td><td>{}</td></tr>'


def _memory_cells(
    url: str, memory: models.Memory, state: browse.MemoryState | None, labels: dict[str, str]
) -> tuple[str, ...]:
    """A memory's row: its link, marked when superseded, its state, time and agent."""
    superseded = state is not None and state.superseded
    said = ("superseded" if superseded else "current") + (
        ", has history" if state is not None and state.supersedes else ""
    )
    return (
        url,
        " memora-superseded" if superseded else "",
        memory.memory,
        said,
        moment(memory.obtained_at),
        labels.get(memory.agent_id, memory.agent_id),
    )


def _memories(number: int) -> str:
    return f"{number} memor{pluralize(number, 'y,ies')}"


def _interactions(number: int) -> str:
    return f"{number} interaction{pluralize(number)}"


def _messages(number: int) -> str:
    return f"{number} message{pluralize(number)}"


def _database(request: HttpRequest) -> str:
    """The alias of ``MEMORA_OGM`` the request's URL names (``db/<alias>/...``), else
    the default database's."""
    match = request.resolver_match
    return str(match.kwargs.get("database", DEFAULT)) if match else DEFAULT


def _elsewhere(request: HttpRequest) -> str:
    """Where an action happened, for the admin's history, unless the default database."""
    database = _database(request)
    return "" if database == DEFAULT else f" in database {database!r}"


def _search(request: HttpRequest) -> str | None:
    return request.GET.get("q", "").strip() or None


class MemoryGraphAdmin(admin.ModelAdmin):  # type: ignore[misc]  # Django ships no types
    """The memory graph's pages; ``view`` reads, ``delete`` deletes memories and
    interactions, ``erase_user`` erases users."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_erase_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(f"{self.opts.app_label}.{ERASE_USER}"))

    # URLs

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        user = "org/<str:org_id>/user/<str:user_id>/"
        memory, interaction = f"{user}memory/<str:memory_id>/", f"{user}interaction/<str:iid>/"
        can_view, can_delete = self.has_view_permission, self.has_delete_permission
        routes: list[tuple[str, str, View, Callable[..., bool]]] = [
            ("", "changelist", self.organizations_view, can_view),
            ("org/<str:org_id>/", "organization", self.organization_view, can_view),
            (user, "user", self.user_view, can_view),
            (f"{user}picture/", "picture", self.picture_view, can_view),
            (f"{user}picture/page/", "picture_page", self.picture_page_view, can_view),
            (f"{user}export/", "export", self.export_view, can_view),
            (f"{user}erase/", "erase_confirm", self.erase_confirm_view, self.has_erase_permission),
            (f"{user}erase/confirmed/", "erase", self.erase_view, self.has_erase_permission),
            (memory, "memory", self.memory_view, can_view),
            (f"{memory}delete/", "memory_delete_confirm", self.memory_confirm_view, can_delete),
            (f"{memory}delete/confirmed/", "memory_delete", self.memory_delete_view, can_delete),
            (interaction, "interaction", self.interaction_view, can_view),
            (
                f"{interaction}delete/",
                "interaction_delete_confirm",
                self.interaction_confirm_view,
                can_delete,
            ),
            (
                f"{interaction}delete/confirmed/",
                "interaction_delete",
                self.interaction_delete_view,
                can_delete,
            ),
        ]
        wrapped = [
            (route, kind, self._wrap(view, allowed, destructive=kind.endswith(("erase", "delete"))))
            for route, kind, view, allowed in routes
        ]
        # the default database's pages, then the same pages of any other under db/<alias>/
        return [path(route, view, name=f"{name}_{kind}") for route, kind, view in wrapped] + [
            path(f"db/<str:database>/{route}", view, name=f"{name}_db_{kind}")
            for route, kind, view in wrapped
        ]

    def _url_in(self, database: str, kind: str, *args: str) -> str:
        """The URL of the page ``kind`` of ``database``."""
        if database != DEFAULT:
            kind, args = f"db_{kind}", (database, *args)
        name = f"{self.opts.app_label}_{self.opts.model_name}_{kind}"
        return str(reverse(f"{self.admin_site.name}:{name}", args=args))

    def _url(self, request: HttpRequest, kind: str, *args: str) -> str:
        """The URL of the page ``kind`` of the request's database."""
        return self._url_in(_database(request), kind, *args)

    def _urls(self, request: HttpRequest, kind: str, *args: str) -> Callable[[str], str]:
        """The URL of ``kind`` for any last id: reversed once for all a page's rows."""
        head, _, tail = self._url(request, kind, *args, ROW).rpartition(ROW)
        return lambda last: f"{head}{quote(last, safe=RFC3986_SUBDELIMS + '/~:@')}{tail}"

    def _wrap(self, view: View, allowed: Callable[[HttpRequest], bool], destructive: bool) -> View:
        """``view`` behind the admin's login, ``allowed``'s permission (else 403), GET
        only or POST only (destructive), with a clear page for a fault of the graph."""

        @functools.wraps(view)
        def guarded(request: HttpRequest, **kwargs: str) -> HttpResponse:
            if not allowed(request):
                raise PermissionDenied
            database = kwargs.pop("database", DEFAULT)  # _database(request) reads it
            try:
                if database not in databases():
                    detail = f"{SETTING} has no database {database!r}."
                    return self._problem(request, "Not found", detail, 404)
                return view(request, **kwargs)
            except NotFoundError as error:
                return self._problem(request, "Not found", str(error.message), 404)
            except ConfigurationError as error:
                return self._problem(request, "memora-ogm's settings are unusable", str(error), 503)
            except (RetriesExhausted, DriverError, OSError) as error:
                return self._problem(
                    request,
                    "Neo4j is not reachable",
                    f"{self._server(database)} did not answer ({type(error).__name__}: "
                    f"{error}). Start the server or correct {setting_name('NEO4J_URI', database)}.",
                    503,
                )
            except Neo4jError as error:
                return self._problem(
                    request, "Neo4j refused the request", f"{error.code}: {error.message}", 503
                )
            except ValueError as error:  # ids from the URL that no node can have
                return self._problem(request, "Bad request", str(error), 400)

        method = require_POST if destructive else require_GET
        return self.admin_site.admin_view(method(guarded))  # type: ignore[no-any-return]

    @staticmethod
    def _server(database: str) -> str:
        try:
            return f"Neo4j at {memora_config(database).neo4j.uri}"
        except ValueError:
            return "Neo4j"

    @staticmethod
    def _memora(request: HttpRequest) -> sync.Neo4jGraphInterface:
        """The facade of the request's database."""
        return get_interface(_database(request))

    # Rendering

    def _render(
        self, request: HttpRequest, template: str, title: str, status: int = 200, **context: Any
    ) -> HttpResponse:
        crumbs = context.pop("crumbs", [])
        if len(databases()) > 1:  # which database the page shows
            crumbs = [(_database(request), self._url(request, "changelist")), *crumbs]
        return TemplateResponse(
            request,
            f"memora_ogm/admin/{template}",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": title,
                "crumbs": [("memory graph", self._url_in(DEFAULT, "changelist")), *crumbs],
                "can_delete": self.has_delete_permission(request),
                "can_erase": self.has_erase_permission(request),
                **context,
            },
            status=status,
        )

    def _problem(self, request: HttpRequest, title: str, detail: str, status: int) -> HttpResponse:
        return self._render(request, "problem.html", title, status, detail=detail).render()

    def _org_crumb(self, request: HttpRequest, org: models.Organization) -> tuple[str, str]:
        return org.org_name, self._url(request, "organization", org.org_id)

    def _user_crumbs(
        self, request: HttpRequest, org_id: str, user: models.User
    ) -> list[tuple[str, str]]:
        org = self._memora(request).get_organization(org_id)
        return [
            self._org_crumb(request, org),
            (user.user_name, self._url(request, "user", org_id, user.user_id)),
        ]

    # Pages

    def organizations_view(self, request: HttpRequest) -> HttpResponse:
        search, pages = _search(request), Pages(request, "p", PER_PAGE)
        found = self._memora(request).graph.execute(
            browse.organizations_page, search, pages.skip, PER_PAGE
        )
        url = self._urls(request, "organization")
        rows = [(url(org.item.org_id), org) for org in found.rows]
        aliases = list(databases())
        choices = [(a, self._url_in(a, "changelist"), a == _database(request)) for a in aliases]
        return self._render(
            request,
            "organizations.html",
            "Organisations",
            rows=rows,
            pages=pages,
            links=pages.links(found.total),
            total=found.total,
            search=search or "",
            databases=choices if len(choices) > 1 else [],
        )

    def organization_view(self, request: HttpRequest, org_id: str) -> HttpResponse:
        search = _search(request)
        users, agents = Pages(request, "p", PER_PAGE), Pages(request, "ap", PER_PAGE)
        found = self._memora(request).graph.execute(
            browse.organization_page, org_id, search, users.skip, agents.skip, PER_PAGE
        )
        org = found.organization
        url = self._urls(request, "user", org_id)
        rows = [(url(user.item.user_id), user) for user in found.users.rows]
        return self._render(
            request,
            "organization.html",
            org.item.org_name,
            org=org,
            users=rows,
            user_number=users.number,
            user_total=found.users.total,
            user_links=users.links(found.users.total),
            agents=[(url(a.item.user_id) if a.item.user_id else "", a) for a in found.agents.rows],
            agent_number=agents.number,
            agent_total=found.agents.total,
            agent_links=agents.links(found.agents.total),
            search=search or "",
            crumbs=[self._org_crumb(request, org.item)],
        )

    def user_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        memora, search = self._memora(request), _search(request)
        user = memora.graph.execute(browse.user_with_counts, org_id, user_id)
        memory_pages = Pages(request, "p", PER_PAGE)
        interaction_pages = Pages(request, "ip", INTERACTIONS_PER_PAGE)
        how = ""
        if search is None:
            memories = memora.get_all_user_memories(
                org_id, user_id, skip=memory_pages.skip, limit=PER_PAGE
            )
            memory_links = memory_pages.links(user.counts["memories"])
        elif memora.associated_vector_db is not None:
            memories, how = self._closest(request, org_id, user_id, search), "closest in meaning"
            memory_links = []
        else:
            memories = memora.graph.execute(
                browse.memories_matching,
                memora.graph.has_apoc(),
                org_id,
                user_id,
                search,
                memory_pages.skip,
                PER_PAGE,
            )
            how, memory_links = "containing the text", memory_pages.links(None, len(memories))
        ids = [memory.memory_id for memory in memories]
        states = memora.graph.execute(browse.memory_states, org_id, user_id, ids) if ids else {}
        interactions = memora.get_all_user_interactions(
            org_id,
            user_id,
            with_their_messages=False,
            with_their_memories=False,
            skip=interaction_pages.skip,
            limit=INTERACTIONS_PER_PAGE,
        )
        serving = memora.graph.execute(
            browse.user_agents,
            org_id,
            user_id,
            [m.agent_id for m in memories] + [i.agent_id for i in interactions],
            PER_PAGE,
        )
        labels = serving.labels
        memory_url = self._urls(request, "memory", org_id, user_id)
        interaction_url = self._urls(request, "interaction", org_id, user_id)
        return self._render(
            request,
            "user.html",
            user.item.user_name,
            person=user,
            memory_rows=format_html_join(
                "\n",
                MEMORY_ROW,
                (
                    _memory_cells(memory_url(m.memory_id), m, states.get(m.memory_id), labels)
                    for m in memories
                ),
            ),
            memory_links=memory_links,
            memory_number=memory_pages.number,
            memory_total=None if search else user.counts["memories"],
            how=how,
            interaction_rows=format_html_join(
                "\n",
                INTERACTION_ROW,
                (
                    (
                        interaction_url(i.interaction_id),
                        i.interaction_id,
                        labels.get(i.agent_id, i.agent_id),
                        moment(i.created_at),
                        moment(i.updated_at),
                    )
                    for i in interactions
                ),
            ),
            interaction_links=interaction_pages.links(user.counts["interactions"]),
            interaction_number=interaction_pages.number,
            agents=serving.agents,
            agent_total=serving.total,
            search=search or "",
            picture_url=self._url(request, "picture", org_id, user_id),
            export_url=self._url(request, "export", org_id, user_id),
            erase_url=self._url(request, "erase_confirm", org_id, user_id),
            crumbs=self._user_crumbs(request, org_id, user.item),
        )

    def _closest(
        self, request: HttpRequest, org_id: str, user_id: str, search: str
    ) -> list[models.Memory]:
        """The vector store's hybrid search, read back from the graph (one statement)."""
        memora = self._memora(request)
        store = memora.associated_vector_db
        assert store is not None
        hits = store.search_memory(search, MemorySearchScope.USER, org_id, user_id=user_id)
        keys = [{"org_id": org_id, "user_id": user_id, "memory_id": m.memory_id} for m, _ in hits]
        found = {m.memory_id: m for m in memora.fetch_user_memories_resolved(keys)} if keys else {}
        return [found[m.memory_id] for m, _ in hits if m.memory_id in found][:PER_PAGE]

    def memory_view(
        self, request: HttpRequest, org_id: str, user_id: str, memory_id: str
    ) -> HttpResponse:
        memora = self._memora(request)
        history = memora.get_user_memory_history(org_id, user_id, memory_id)
        key = {"org_id": org_id, "user_id": user_id, "memory_id": memory_id}
        newest = memora.fetch_user_memories_resolved([key])
        user = memora.get_user(org_id, user_id)
        memory = history[0]
        return self._render(
            request,
            "memory.html",
            f"Memory {memory_id}",
            memory=memory,
            agent=self._agent_label(request, org_id, user_id, memory.agent_id),
            history=[
                (self._url(request, "memory", org_id, user_id, m.memory_id), m) for m in history[1:]
            ],
            newest=[
                (self._url(request, "memory", org_id, user_id, m.memory_id), m)
                for m in newest
                if m.memory_id != memory_id
            ],
            interaction_url=self._url(
                request, "interaction", org_id, user_id, memory.interaction_id
            )
            if memory.interaction_id
            else "",
            delete_url=self._url(request, "memory_delete_confirm", org_id, user_id, memory_id),
            crumbs=[*self._user_crumbs(request, org_id, user), (f"memory {memory_id[:8]}", "")],
        )

    def interaction_view(
        self, request: HttpRequest, org_id: str, user_id: str, iid: str
    ) -> HttpResponse:
        memora = self._memora(request)
        interaction = memora.get_interaction(org_id, user_id, iid)
        user = memora.get_user(org_id, user_id)
        return self._render(
            request,
            "interaction.html",
            f"Interaction {iid}",
            interaction=interaction,
            agent=self._agent_label(request, org_id, user_id, interaction.agent_id),
            memories=[
                (self._url(request, "memory", org_id, user_id, m.memory_id), m)
                for m in interaction.memories or []
            ],
            delete_url=self._url(request, "interaction_delete_confirm", org_id, user_id, iid),
            crumbs=[*self._user_crumbs(request, org_id, user), (f"interaction {iid}", "")],
        )

    def _agent_label(self, request: HttpRequest, org_id: str, user_id: str, agent_id: str) -> str:
        """The agent's label (its id when it is gone)."""
        found = self._memora(request).graph.execute(
            browse.user_agents, org_id, user_id, [agent_id], 0
        )
        return found.labels.get(agent_id, agent_id)

    def picture_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        user = self._memora(request).get_user(org_id, user_id)
        return self._render(
            request,
            "picture.html",
            f"{user.user_name}'s graph",
            page_url=self._url(request, "picture_page", org_id, user_id),
            crumbs=[*self._user_crumbs(request, org_id, user), ("graph", "")],
        )

    def picture_page_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        """The package's picture page, shown in the picture view's frame."""
        response = HttpResponse(self._memora(request).graph_of(org_id, user_id).html())
        response["X-Frame-Options"] = "SAMEORIGIN"
        return response

    # Actions

    def export_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        """The user in the package's export format (JSON Lines), as a download."""
        memora = self._memora(request)
        memora.get_user(org_id, user_id)  # a missing user is a 404 page, not a broken file
        records = memora.export_user(org_id, user_id)
        lines: Iterator[str] = (dumps(record) + "\n" for record in records)
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        name = f"memora-{org_id}-{user_id}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    def _log(self, request: HttpRequest, object_id: str, text: str, message: str) -> None:
        """The action in the admin's history (``LogEntry``), as a deletion."""
        LogEntry.objects.create(
            user_id=request.user.pk,
            content_type=ContentType.objects.get_for_model(MemoryGraph, for_concrete_model=False),
            object_id=object_id,
            object_repr=text[:200],
            action_flag=DELETION,
            change_message=message,
        )

    def _confirm(
        self, request: HttpRequest, title: str, action: str, going: list[str], **context: Any
    ) -> HttpResponse:
        return self._render(
            request, "confirm.html", title, action_url=action, going=going, **context
        )

    def _and_the_store(self, request: HttpRequest) -> str:
        return "" if self._memora(request).associated_vector_db is None else " and the vector store"

    def erase_confirm_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        user = self._memora(request).graph.execute(browse.user_with_counts, org_id, user_id)
        counts = user.counts
        return self._confirm(
            request,
            f"Erase {user.item.user_name}?",
            self._url(request, "erase", org_id, user_id),
            [
                f"the user {user.item.user_name} ({user_id})",
                f"{_interactions(counts['interactions'])} with their messages",
                f"{_memories(counts['memories'])}, from the graph{self._and_the_store(request)}",
            ],
            back=self._url(request, "user", org_id, user_id),
            crumbs=[*self._user_crumbs(request, org_id, user.item), ("erase", "")],
        )

    def erase_view(self, request: HttpRequest, org_id: str, user_id: str) -> HttpResponse:
        memora = self._memora(request)
        user = memora.graph.execute(browse.user_with_counts, org_id, user_id)
        memora.delete_user(org_id, user_id)
        counts = user.counts
        text = (
            f"Erased user {user.item.user_name} ({user_id}) of organisation {org_id}"
            f"{_elsewhere(request)}: "
            f"{_interactions(counts['interactions'])}, {_memories(counts['memories'])}."
        )
        self._log(request, f"{org_id}/{user_id}", f"user {user.item.user_name}", text)
        messages.success(request, text)
        return HttpResponseRedirect(self._url(request, "organization", org_id))

    def memory_confirm_view(
        self, request: HttpRequest, org_id: str, user_id: str, memory_id: str
    ) -> HttpResponse:
        memory = self._memora(request).get_user_memory(org_id, user_id, memory_id)
        user = self._memora(request).get_user(org_id, user_id)
        return self._confirm(
            request,
            "Delete this memory?",
            self._url(request, "memory_delete", org_id, user_id, memory_id),
            [f"1 memory, from the graph{self._and_the_store(request)}: {memory.memory}"],
            back=self._url(request, "memory", org_id, user_id, memory_id),
            crumbs=[*self._user_crumbs(request, org_id, user), ("delete memory", "")],
        )

    def memory_delete_view(
        self, request: HttpRequest, org_id: str, user_id: str, memory_id: str
    ) -> HttpResponse:
        memora = self._memora(request)
        memory = memora.get_user_memory(org_id, user_id, memory_id)
        memora.delete_user_memory(org_id, user_id, memory_id)
        text = f"Deleted memory {memory_id} of user {user_id}{_elsewhere(request)}: {memory.memory}"
        self._log(request, f"{org_id}/{user_id}/{memory_id}", f"memory {memory_id}", text)
        messages.success(request, text)
        return HttpResponseRedirect(self._url(request, "user", org_id, user_id))

    def interaction_confirm_view(
        self, request: HttpRequest, org_id: str, user_id: str, iid: str
    ) -> HttpResponse:
        interaction = self._memora(request).get_interaction(org_id, user_id, iid)
        user = self._memora(request).get_user(org_id, user_id)
        return self._confirm(
            request,
            "Delete this interaction?",
            self._url(request, "interaction_delete", org_id, user_id, iid),
            [
                f"1 interaction ({iid}) with its {_messages(len(interaction.messages or []))}",
                f"{_memories(len(interaction.memories or []))} taken from it, from the graph"
                f"{self._and_the_store(request)}",
            ],
            back=self._url(request, "interaction", org_id, user_id, iid),
            crumbs=[*self._user_crumbs(request, org_id, user), ("delete interaction", "")],
        )

    def interaction_delete_view(
        self, request: HttpRequest, org_id: str, user_id: str, iid: str
    ) -> HttpResponse:
        memora = self._memora(request)
        interaction = memora.get_interaction(org_id, user_id, iid, with_messages=False)
        memora.delete_user_interaction_and_its_memories(org_id, user_id, iid)
        text = (
            f"Deleted interaction {iid} of user {user_id}{_elsewhere(request)} and its "
            f"{_memories(len(interaction.memories or []))}."
        )
        self._log(request, f"{org_id}/{user_id}/{iid}", f"interaction {iid}", text)
        messages.success(request, text)
        return HttpResponseRedirect(self._url(request, "user", org_id, user_id))


admin.site.register(MemoryGraph, MemoryGraphAdmin)
