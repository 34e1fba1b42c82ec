"""Forks once after a setup step and reports whether the child's ``sys.exit`` ended it.

    python fork_exit.py memora_ogm | memora_ogm.sync | embedded

``embedded``: a sync ``QdrantDB`` in memory has saved and searched memories with Memora's
two models (the fastembed stand-ins that ``FASTEMBED_CACHE_PATH`` names). The child exits
by ``sys.exit(0)``, the interpreter's normal exit with its atexit handlers and C++ static
destructors; the parent waits at most ``BOUND`` seconds, then kills it. Prints one JSON
line: whether onnxruntime was loaded at the fork, whether the child ended in time, how.

The bound tells a hang (the child never ends) from a slow exit, not a quick exit from a slow
one: the embedded child's final garbage collection walks the whole inherited heap, copying
its pages, 0.5-0.7 s on a quiet machine and over 5 s once measured beside the suite's
other worker and two Neo4j servers on two cores.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import uuid

BOUND = 60.0


def _embed() -> None:
    from memora_ogm.sync import MemorySearchScope, QdrantDB

    store = QdrantDB()
    store.setup()
    ids = [str(uuid.uuid4()), str(uuid.uuid4())]
    texts = ["user_a lives in Oslo", "she walks the dog"]
    store.add_memories("org", "user", "agent", ids, texts, "2026-12-03T00:00:00+00:00")
    found = store.search_memory("where does she live", MemorySearchScope.USER, "org", "user")
    assert found and found[0][0].memory == "user_a lives in Oslo", found


def main(case: str) -> None:
    if case == "embedded":
        _embed()
    else:
        importlib.import_module(case)
    loaded = "onnxruntime" in sys.modules
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's only job is to exit normally
        sys.exit(0)
    started = time.monotonic()
    while time.monotonic() - started < BOUND:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            seconds = time.monotonic() - started
            report: dict[str, object] = {
                "exited": True,
                "status": os.waitstatus_to_exitcode(status),
            }
            break
        time.sleep(0.02)
    else:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        seconds, report = BOUND, {"exited": False, "status": None}
    print(json.dumps({"onnxruntime": loaded, "seconds": round(seconds, 2), **report}))


if __name__ == "__main__":
    main(sys.argv[1])
