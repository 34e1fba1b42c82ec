"""Web servers run as users deploy them, on localhost, and stopped as a deploy stops them.

``serve`` starts a server command (gunicorn, uvicorn, ...) on a free port, waits until an
answer comes, and on the way out sends SIGTERM and requires the master and every worker
to be gone within ``STOP_BOUND`` seconds. The bound is this module's, not the server's
graceful timeout (gunicorn's 30 s), so a worker that hangs at exit fails the test instead
of being killed quietly by its master.
"""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

#: Seconds from SIGTERM until the master and all its workers must be gone.
STOP_BOUND = 5.0
#: The example apps a user copies, served from their own folder as the docs run them.
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> ModuleType:
    """``examples/<name>.py``, imported as the top-level module ``name``."""
    if str(EXAMPLES) not in sys.path:
        sys.path.append(str(EXAMPLES))
    return importlib.import_module(name)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(child) for child in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    workers: set[int] = field(default_factory=set)

    def stop(self) -> float:
        """SIGTERM to the master; the seconds until it and every worker had ended."""
        self.workers |= children(self.process.pid)
        started = time.monotonic()
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_BOUND)
            while any(map(_alive, self.workers)) and time.monotonic() - started < STOP_BOUND:
                time.sleep(0.02)
        except subprocess.TimeoutExpired:
            pass
        seconds = time.monotonic() - started
        left = [pid for pid in (self.process.pid, *self.workers) if _alive(pid)]
        for pid in left:
            os.kill(pid, 9)
        self.process.wait()
        assert not left, f"still running {seconds:.1f} s after SIGTERM: {left}"
        return seconds


@contextmanager
def serve(
    command: Sequence[str],
    env: dict[str, str],
    probe: str,
    cwd: Path | None = None,
    log: Path | None = None,
) -> Iterator[Served]:
    """``command`` with ``{port}`` filled in, until ``probe`` (a path) gets any HTTP
    answer; stopped with :meth:`Served.stop` on the way out unless the test did. Its
    stderr goes to ``log`` if given (a server that logs each request would fill a pipe)."""
    port = free_port()
    with open(log or os.devnull, "w") as written:
        process = subprocess.Popen(
            [part.format(port=port) for part in command],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=written if log else subprocess.PIPE,
            text=True,
        )
    served = Served(f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(served.url + probe, timeout=2)
            break
        except urllib.error.HTTPError:
            break  # an HTTP error is an answer: the workers serve
        except OSError as error:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                said = log.read_text() if log else process.communicate()[1]
                raise AssertionError(f"{command[0]} did not start: {said}") from error
            time.sleep(0.1)
    try:
        yield served
    finally:
        if process.returncode is None:
            served.stop()
