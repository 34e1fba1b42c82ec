"""Worker processes forked from the one that checked the graph and the store.

uvicorn's own ``workers=`` spawns each worker afresh, so each imports the MCP SDK, the
driver and the vector store again (seconds on a busy machine) after the parent has done
the same to check them. A forked worker starts from what its parent imported and makes
its app, with its own connections, after the fork (:mod:`memora_ogm.fork` keeps a child
off any the parent held).
"""

from __future__ import annotations

import os
import signal
import socket
import time
from contextlib import suppress
from types import FrameType

import uvicorn

from memora_ogm.mcp.reasons import log

#: Seconds before a worker that ended is replaced: no busy loop of forks.
RESTART_PAUSE = 1.0
#: Signals that stop the server; each worker gets SIGTERM and finishes its calls.
STOPS = (signal.SIGTERM, signal.SIGINT)


def serve_forked(config: uvicorn.Config, workers: int) -> None:
    """Serve ``config`` from ``workers`` forked processes sharing one socket, until
    SIGTERM or SIGINT; a worker that ends before then is replaced."""
    sock = config.bind_socket()
    children: set[int] = set()
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in STOPS}
    try:
        for _ in range(workers):
            _fork(config, sock, children)
        while children:
            pid, status = os.wait()
            children.discard(pid)
            if stopping:
                continue
            log.warning(f"worker {pid} ended ({_ending(status)}); starting another")
            time.sleep(RESTART_PAUSE)
            if not stopping:
                _fork(config, sock, children)
    finally:
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _fork(config: uvicorn.Config, sock: socket.socket, children: set[int]) -> None:
    """A worker serving ``config`` on ``sock``, its pid added to ``children``. Stop
    signals wait until it is there, so a stop never misses a worker just forked."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        pid = os.fork()
        if pid == 0:
            _work(config, sock)
        children.add(pid)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def _work(config: uvicorn.Config, sock: socket.socket) -> None:
    """The worker's whole life: uvicorn's server, whose own handlers take the stop
    signals once it runs; never returns into the parent's code."""
    code = 1
    try:
        for sig in STOPS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        app_server = uvicorn.Server(config)
        app_server.run(sockets=[sock])
        code = 0 if app_server.started else 3
    except BaseException:
        log.exception("worker %d failed", os.getpid())
    finally:
        os._exit(code)


def _ending(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
