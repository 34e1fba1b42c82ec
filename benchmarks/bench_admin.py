"""The admin's user page (``memora_ogm.contrib.django.admin``) against the facade calls it
makes, and its statements as the user grows.

    python benchmarks/bench_admin.py [--rounds 30] [--sizes 100,1000,10000]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded server),
sets Django up in this process (the admin, an in-memory SQLite for the login) and, for
each size, imports a user of that many memories and a tenth as many interactions
(``tests/admin_data.py``), then alternates, ``--rounds`` times, the page (Django's test
client: middleware, login, the view, its template) and the same facade calls alone
(page 3 of the memories, page 2 of the interactions) and the admin's index through the
same client: Django's own cost of an admin page (middleware, session, login, the admin's
context and base template, its sidebar), which the user page pays too. Prints the
medians (wall time, then this process's CPU time: the client's work alone), the page's
ratio to its calls, the page less Django's own against the calls, and the statements the
page sends; the tenant is deleted at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memora_ogm.calls import browse
from memora_ogm.server import connect_or_start

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from admin_data import Made, a_user_with  # noqa: E402 (a test helper, found above)

#: The user page's query: page 3 of the memories, page 2 of the interactions.
PAGE = {"p": 3, "ip": 2}
#: The admin's index: no read of ours, Django's own cost of an admin page.
INDEX = "/admin/"


def django_with_the_admin(env: dict[str, str]) -> Any:
    """Django configured here with the admin; a logged-in test client."""
    import django
    from django.conf import settings

    settings.configure(
        SECRET_KEY="bench",
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=[
            "django.contrib.admin",
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "django.contrib.messages",
            "memora_ogm.contrib.django",
        ],
        MIDDLEWARE=[
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.contrib.messages.middleware.MessageMiddleware",
        ],
        ROOT_URLCONF=__name__,
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {
                    "context_processors": [
                        "django.template.context_processors.request",
                        "django.contrib.auth.context_processors.auth",
                        "django.contrib.messages.context_processors.messages",
                    ]
                },
            }
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        STATIC_URL="static/",
        USE_TZ=True,
        MEMORA_OGM=env,
    )
    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    client = Client()
    client.force_login(User.objects.create_superuser("bench", password="bench"))
    return client


def urlpatterns_of_the_admin() -> list[Any]:
    from django.contrib import admin
    from django.urls import path

    return [path("admin/", admin.site.urls)]


def __getattr__(name: str) -> Any:  # ROOT_URLCONF is this module, read once Django is set up
    if name == "urlpatterns":
        return urlpatterns_of_the_admin()
    raise AttributeError(name)


def calls_alone(memora: Any, made: Made) -> None:
    """What the user page reads for ``?p=3&ip=2``, through the facade, nothing rendered."""
    org_id, user_id = made.org_id, made.user_id
    memora.graph.execute(browse.user_with_counts, org_id, user_id)
    memories = memora.get_all_user_memories(org_id, user_id, skip=100, limit=50)
    ids = [memory.memory_id for memory in memories]
    memora.graph.execute(browse.memory_states, org_id, user_id, ids)
    interactions = memora.get_all_user_interactions(
        org_id, user_id, with_their_messages=False, with_their_memories=False, skip=20, limit=20
    )
    agent_ids = [m.agent_id for m in memories] + [i.agent_id for i in interactions]
    memora.graph.execute(browse.user_agents, org_id, user_id, agent_ids, 50)
    memora.get_organization(org_id)


def timed(times: list[tuple[float, float]], run: Callable[..., Any], *args: Any) -> None:
    """Run ``run(*args)`` and add its wall time and this thread's CPU time (the client's
    work: Django, the view, the driver), in milliseconds, to ``times``."""
    started, cpu = time.perf_counter(), time.thread_time()
    run(*args)
    times.append(((time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000))


def medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    """The median wall time and the median CPU time."""
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sizes", default="100,1000,10000")
    args = parser.parse_args()
    with connect_or_start() as conn:
        client = django_with_the_admin(conn.env())
        from memora_ogm.contrib.django import get_interface

        memora = get_interface()
        memora.setup()
        print(
            f"{'memories':>9} {'page ms':>8} {'calls ms':>9} {'ratio':>6} {'index ms':>9} "
            f"{'page-index':>10} {'ratio':>6} {'cpu: page':>10} {'calls':>6} {'index':>6} "
            f"{'statements':>10}"
        )
        for size in (int(size) for size in args.sizes.split(",")):
            made = a_user_with(memora, max(1, size // 10), size, org_name=f"bench-admin-{size}")
            url = f"/admin/memora_ogm/memorygraph/org/{made.org_id}/user/{made.user_id}/"
            try:
                before = memora.graph.statements
                response = client.get(url, PAGE)
                assert response.status_code == 200, response.status_code
                statements = memora.graph.statements - before
                page: list[tuple[float, float]] = []
                alone: list[tuple[float, float]] = []
                index: list[tuple[float, float]] = []
                for _ in range(3):  # warm all three
                    client.get(url, PAGE)
                    calls_alone(memora, made)
                    client.get(INDEX)
                for _ in range(args.rounds):
                    timed(page, client.get, url, PAGE)
                    timed(alone, calls_alone, memora, made)
                    timed(index, client.get, INDEX)
                (page_ms, page_cpu), (alone_ms, alone_cpu) = medians(page), medians(alone)
                index_ms, index_cpu = medians(index)
                print(
                    f"{size:>9} {page_ms:>8.2f} {alone_ms:>9.2f} {page_ms / alone_ms:>5.2f}x "
                    f"{index_ms:>9.2f} {page_ms - index_ms:>10.2f} "
                    f"{(page_ms - index_ms) / alone_ms:>5.2f}x {page_cpu:>10.2f} "
                    f"{alone_cpu:>6.2f} {index_cpu:>6.2f} {statements:>10}"
                )
            finally:
                memora.delete_organization(made.org_id)


if __name__ == "__main__":
    main()
