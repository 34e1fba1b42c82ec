"""Follow one save from the facade to the driver: the package's function calls and files.

    python scripts/trace_save.py [--twin async|sync] [--files]

Connects (or starts the local Neo4j, as the test suite does), creates an organisation, a
user and an agent, saves one interaction so the statement cache and the connection are
warm, then traces a second save of 6 messages and 3 memories with ``sys.setprofile``.
Counted: calls of Python functions defined in the package (the generated ``_sync/`` twin
counts as the package too), and the package's files they live in: the files a reader
opens to follow the save. ``--files`` lists the files with their calls.

It uses only the public facade, so it runs against any checkout with
``PYTHONPATH=CHECKOUT`` (run it from outside the checkout being measured).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import memora_ogm
from memora_ogm import Neo4jGraphInterface
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import connect_or_start
from memora_ogm.sync import Neo4jGraphInterface as SyncInterface

PACKAGE = Path(memora_ogm.__file__).resolve().parent


def one_save() -> MemoriesAndInteraction:
    """6 messages, 3 memories: the save of issue 48's figures."""
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"} for n in range(6)
    ]
    memories = [MemoryToStore(memory=f"memory {n}", source_msg_block_pos=[n]) for n in range(3)]
    return MemoriesAndInteraction(interaction=messages, memories=memories)


class Trace:
    """Calls of the package's functions, by file, while it is installed.

    A coroutine or generator raises a "call" event each time it resumes, so a call is
    counted once per frame: the frames seen are held, which keeps their ids unique.
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.frames: dict[int, FrameType] = {}

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and id(frame) not in self.frames:
            name = frame.f_code.co_filename
            if name.startswith(str(PACKAGE)):
                self.frames[id(frame)] = frame
                self.calls[str(Path(name).relative_to(PACKAGE))] += 1

    def __enter__(self) -> Trace:
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def report(trace: Trace, twin: str, files: bool) -> None:
    print(
        f"{twin}: {sum(trace.calls.values())} package function calls in "
        f"{len(trace.calls)} files (memora_ogm {memora_ogm.__version__}, {PACKAGE})"
    )
    if files:
        for name, count in sorted(trace.calls.items(), key=lambda item: (-item[1], item[0])):
            print(f"  {count:5d}  {name}")


def trace_async(uri: str, auth: tuple[str, str], database: str, files: bool) -> None:
    async def main() -> None:
        memora = Neo4jGraphInterface(uri, *auth, database)
        await memora.setup()
        org = (await memora.create_organization("Trace")).org_id
        user = (await memora.create_user(org, "Ann")).user_id
        agent = (await memora.create_agent(org, "Bot")).agent_id
        await memora.save_interaction_with_memories(org, agent, user, one_save())
        data = one_save()
        # The profile hook is the thread's, so it also sees the event loop's callbacks
        # while the save awaits; only the package's own frames are counted.
        with Trace() as trace:
            await memora.save_interaction_with_memories(org, agent, user, data)
        await memora.delete_organization(org)
        await memora.close()
        report(trace, "async", files)

    asyncio.run(main())


def trace_sync(uri: str, auth: tuple[str, str], database: str, files: bool) -> None:
    memora = SyncInterface(uri, *auth, database)
    memora.setup()
    org = memora.create_organization("Trace").org_id
    user = memora.create_user(org, "Ann").user_id
    agent = memora.create_agent(org, "Bot").agent_id
    memora.save_interaction_with_memories(org, agent, user, one_save())
    data = one_save()
    with Trace() as trace:
        memora.save_interaction_with_memories(org, agent, user, data)
    memora.delete_organization(org)
    memora.close()
    report(trace, "sync", files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--twin", choices=("async", "sync"), default="async")
    parser.add_argument("--files", action="store_true", help="list the files and their calls")
    options = parser.parse_args()
    with connect_or_start() as conn:
        auth = (conn.username, conn.password)
        tracer = trace_async if options.twin == "async" else trace_sync
        tracer(conn.uri, auth, conn.database, options.files)


if __name__ == "__main__":
    main()
