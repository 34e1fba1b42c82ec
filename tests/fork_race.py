"""A parent and the children it forks, reading and writing their own tenants at once.

    python tests/fork_race.py sync|async ROUNDS     # NEO4J_URI & co. in the environment

What gunicorn ``--preload``, uWSGI, Celery's prefork pool and ``multiprocessing`` do: the
interface is made and used (its pool filled by several threads) before ``os.fork()``,
then every process keeps using it. Each process reads its own organisation and user,
and creates and reads back users of its own, from several threads (sync) or tasks
(async), checking every answer. Prints one JSON object: per process, the calls made,
the answers that were someone else's, and the errors by type.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from memora_ogm import Neo4jGraphInterface, sync
from memora_ogm.server.connection import connection_from_env

CHILDREN = 3
WORKERS = 4

Tenant = tuple[str, str, str]
"""An organisation's id, its user's id and the name both carry."""


class Tally:
    def __init__(self) -> None:
        self.calls = 0
        self.wrong = 0
        self.errors: Counter[str] = Counter()
        self.lock = threading.Lock()

    def check(self, same: bool) -> None:
        with self.lock:
            self.calls += 1
            self.wrong += not same

    def failed(self, error: BaseException) -> None:
        with self.lock:
            self.calls += 1
            self.errors[type(error).__name__] += 1

    def summary(self, label: str, tenant: Tenant) -> dict[str, Any]:
        return {
            "process": label,
            "org_id": tenant[0],
            "calls": self.calls,
            "wrong": self.wrong,
            "errors": self.errors,
        }


def steps(memora: Any, tenant: Tenant, rounds: int, worker: int) -> list[Callable[[], Any]]:
    """Each step is a call and the check of its answer (async steps return coroutines)."""
    org_id, user_id, name = tenant
    result: list[Callable[[], Any]] = []
    for number in range(rounds):
        result.append(lambda: ("org", memora.get_organization(org_id), name))
        result.append(lambda: ("user", memora.get_user(org_id, user_id), name))
        if number % 10 == 0:
            new_name = f"{name} w{worker} n{number}"
            result.append(partial(_create, memora, org_id, new_name))
    return result


def _create(memora: Any, org_id: str, name: str) -> tuple[str, Any, str]:
    return "new", memora.create_user(org_id, name), name


def same(kind: str, answer: Any, expected: str) -> bool:
    found: str = answer.org_name if kind == "org" else answer.user_name
    return found == expected


def run_sync(memora: sync.Neo4jGraphInterface, tenant: Tenant, rounds: int, tally: Tally) -> None:
    def worker(number: int) -> None:
        for step in steps(memora, tenant, rounds, number):
            try:
                kind, answer, expected = step()
                if kind == "new":
                    answer = memora.get_user(tenant[0], answer.user_id)
                tally.check(same(kind, answer, expected))
            except Exception as error:  # noqa: BLE001 - counted and reported
                tally.failed(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


async def run_async(memora: Neo4jGraphInterface, tenant: Tenant, rounds: int, tally: Tally) -> None:
    async def worker(number: int) -> None:
        for step in steps(memora, tenant, rounds, number):
            try:
                kind, call, expected = step()
                answer = await call
                if kind == "new":
                    answer = await memora.get_user(tenant[0], answer.user_id)
                tally.check(same(kind, answer, expected))
            except Exception as error:  # noqa: BLE001 - counted and reported
                tally.failed(error)

    await asyncio.gather(*(worker(n) for n in range(WORKERS)))


def main() -> None:
    twin, rounds = sys.argv[1], int(sys.argv[2])
    conn = connection_from_env()
    assert conn is not None, "NEO4J_URI & co. name the server"
    args = (conn.uri, conn.username, conn.password, conn.database)
    tenants: list[Tenant] = []
    if twin == "sync":
        memora: Any = sync.Neo4jGraphInterface(*args)
        for number in range(CHILDREN + 2):
            org = memora.create_organization(f"Tenant {number}")
            user = memora.create_user(org.org_id, f"Tenant {number}")
            tenants.append((org.org_id, user.user_id, f"Tenant {number}"))
        run_sync(memora, tenants[-1], 5, Tally())  # several pooled connections before the fork

        def work(tenant: Tenant, tally: Tally) -> None:
            run_sync(memora, tenant, rounds, tally)

    else:
        memora = Neo4jGraphInterface(*args)

        async def prepare() -> None:
            for number in range(CHILDREN + 2):
                org = await memora.create_organization(f"Tenant {number}")
                user = await memora.create_user(org.org_id, f"Tenant {number}")
                tenants.append((org.org_id, user.user_id, f"Tenant {number}"))
            await run_async(memora, tenants[-1], 5, Tally())  # several connections before the fork

        asyncio.run(prepare())

        def work(tenant: Tenant, tally: Tally) -> None:
            asyncio.run(run_async(memora, tenant, rounds, tally))

    children: list[tuple[int, int]] = []
    for number in range(1, CHILDREN + 1):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            tally = Tally()
            try:
                work(tenants[number], tally)
            except BaseException as error:  # noqa: BLE001 - reported to the parent
                tally.failed(error)
            os.write(write, json.dumps(tally.summary(f"child {number}", tenants[number])).encode())
            os._exit(0)
        os.close(write)
        children.append((pid, read))
    tally = Tally()
    work(tenants[0], tally)
    summaries = [tally.summary("parent", tenants[0])]
    for pid, read in children:
        with os.fdopen(read, "rb") as pipe:
            text = pipe.read()
        os.waitpid(pid, 0)
        summaries.append(json.loads(text) if text else {"process": f"pid {pid}", "calls": 0})
    if twin == "sync":
        memora.close()
    else:
        asyncio.run(memora.close())
    print(json.dumps(summaries))


if __name__ == "__main__":
    main()
