"""A Bolt proxy that loses the server's answer to a commit (issue 20, item 7).

It sits between a driver and Neo4j, forwards every byte both ways, and follows the
Bolt messages: the client's requests in order and the server's summaries, one per
request. When :attr:`ReplyLosingProxy.lose` says so for a transaction that wrote, the
server's answer to its ``COMMIT`` (or to the ``PULL`` that ends an auto-commit
statement) is held back and both connections are cut. The server sends that answer
only once the transaction is committed: the write landed, and the driver never hears
so. With ``before=True`` it is the commit itself that is lost: the connection is cut
as the client sends it, and the server rolls the transaction back. Reads are never
touched. With an :attr:`~ReplyLosingProxy.outage`, the server then seems away for that
long: every connection is cut and new ones are refused, so the driver cannot ask
whether the commit landed.
"""

from __future__ import annotations

import argparse
import random
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from urllib.parse import urlsplit

HANDSHAKE_SIZE = 20
#: The server's answer choosing the manifest handshake (Bolt 5.7 and later).
MANIFEST_V1 = b"\x00\x00\x01\xff"
RUN, BEGIN, COMMIT, ROLLBACK, RESET, PULL, GOODBYE = 0x10, 0x11, 0x12, 0x13, 0x0F, 0x3F, 0x02
RECORD, SUCCESS = 0x71, 0x70
#: Statements that change the graph (the facade's writes and their locks contain one).
WRITE_WORDS = ("CREATE", "MERGE", "DELETE", "SET ")


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _read_varint(sock: socket.socket) -> bytes:
    data = b""
    while True:
        byte = _read_exactly(sock, 1)
        data += byte
        if not byte[0] & 0x80:
            return data


def _read_message(sock: socket.socket) -> tuple[bytes, bytes]:
    """One message as sent (chunk headers included) and its payload; a NOOP has none."""
    raw, payload = b"", b""
    while True:
        header = _read_exactly(sock, 2)
        raw += header
        (size,) = struct.unpack(">H", header)
        if size == 0:
            return raw, payload
        chunk = _read_exactly(sock, size)
        raw += chunk
        payload += chunk


def _statement(payload: bytes) -> str:
    """The query text of a RUN message (its first field, a PackStream string)."""
    marker, at = payload[2], 3
    if 0x80 <= marker <= 0x8F:
        size = marker & 0x0F
    else:
        width = {0xD0: 1, 0xD1: 2, 0xD2: 4}[marker]
        size = int.from_bytes(payload[at : at + width], "big")
        at += width
    return payload[at : at + size].decode("utf-8", "replace")


def writes(statements: list[str]) -> bool:
    """Whether a transaction of these statements changes the graph."""
    return any(word in statement for statement in statements for word in WRITE_WORDS)


class ReplyLosingProxy:
    """Listens on a local port for Bolt and forwards to ``uri``'s server.

    ``lose(statements)`` is asked for every write transaction (its statements in order)
    as it commits; when it returns True the commit's answer is lost, or the commit itself
    when ``before`` is set. :meth:`lose_next` arms it for the next few.
    """

    def __init__(self, uri: str) -> None:
        target = urlsplit(uri)
        self.target = (target.hostname or "localhost", target.port or 7687)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lose: Callable[[list[str]], bool] = lambda statements: False
        #: Whether the commit is lost on its way to the server rather than its answer back
        #: (None: either, ``lose`` is asked at both places).
        self.before: bool | None = False
        #: Commits (or their answers) lost so far, with the statements of their transactions.
        self.lost: list[list[str]] = []
        #: Seconds the server seems away after each loss (0: it answers at once).
        self.outage = 0.0
        self._down_until = 0.0
        self._links: set[_Link] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def lose_next(self, count: int = 1, before: bool = False) -> None:
        """Lose the answers to the next ``count`` write commits (the commits themselves
        when ``before``), then none."""
        self.before = before
        left = [count]

        def lose(statements: list[str]) -> bool:
            left[0] -= 1
            return left[0] >= 0

        self.lose = lose

    def close(self) -> None:
        self._closed = True
        self.listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down():
                client.close()  # refused: the server seems away
                continue
            server = socket.create_connection(self.target)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(self, client, server)
            with self._lock:
                self._links.add(link)
            link.start()

    def down(self) -> bool:
        """Whether the server seems away (an outage after a loss is under way)."""
        return time.monotonic() < self._down_until

    def back(self) -> None:
        """Wait until the outage, if any, is over."""
        time.sleep(max(0.0, self._down_until - time.monotonic()))

    def _should_lose(self, statements: list[str], before: bool) -> bool:
        with self._lock:
            if self.before in (None, before) and writes(statements) and self.lose(statements):
                self.lost.append(statements)
                if self.outage:
                    self._down_until = time.monotonic() + self.outage
                    for link in self._links:
                        link.cut()
                return True
            return False


class _Link:
    """One proxied connection: a thread per direction, sharing the pending requests."""

    def __init__(self, proxy: ReplyLosingProxy, client: socket.socket, server: socket.socket):
        self.proxy, self.client, self.server = proxy, client, server
        #: Requests awaiting their answer: (signature, statements of the transaction the
        #: request ends, if it ends one).
        self.pending: deque[tuple[int, list[str]]] = deque()
        self.manifest = threading.Event()
        self.negotiated = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._guard, args=(self._upstream,), daemon=True).start()
        threading.Thread(target=self._guard, args=(self._downstream,), daemon=True).start()

    def _guard(self, run: Callable[[], None]) -> None:
        try:
            run()
        except (OSError, ConnectionError):
            pass
        finally:
            self.cut()
            with self.proxy._lock:
                self.proxy._links.discard(self)

    def cut(self) -> None:
        for sock in (self.client, self.server):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _upstream(self) -> None:
        self.server.sendall(_read_exactly(self.client, HANDSHAKE_SIZE))
        self.negotiated.wait()
        if self.manifest.is_set():  # the client answers with its version and capabilities
            self.server.sendall(_read_exactly(self.client, 4) + _read_varint(self.client))
        transaction: list[str] | None = None  # the statements of the open transaction
        auto_commit: list[str] = []  # the last statement run outside one
        while True:
            raw, payload = _read_message(self.client)
            if payload:
                signature, ends = payload[1], []
                if signature == BEGIN:
                    transaction = []
                elif signature == RUN and transaction is None:
                    auto_commit = [_statement(payload)]
                elif signature == RUN and transaction is not None:
                    transaction.append(_statement(payload))
                elif signature == PULL and transaction is None:
                    ends = auto_commit
                elif signature == COMMIT:
                    ends, transaction = transaction or [], None
                elif signature in (ROLLBACK, RESET):
                    transaction = None
                if ends and self.proxy._should_lose(ends, before=True):
                    return  # the guard cuts both sides: the server never gets the commit
                if signature != GOODBYE:  # the one request without an answer
                    self.pending.append((signature, ends))
            self.server.sendall(raw)

    def _downstream(self) -> None:
        answer = _read_exactly(self.server, 4)
        if answer == MANIFEST_V1:
            count = _read_varint(self.server)
            value = 0
            for shift, byte in enumerate(count):
                value |= (byte & 0x7F) << (7 * shift)
            answer += count + _read_exactly(self.server, 4 * value) + _read_varint(self.server)
            self.manifest.set()
        self.negotiated.set()
        self.client.sendall(answer)
        while True:
            raw, payload = _read_message(self.server)
            if payload and payload[1] != RECORD:
                signature, ends = self.pending.popleft()
                committed = payload[1] == SUCCESS and (
                    signature == COMMIT or (signature == PULL and b"has_more" not in payload)
                )
                if committed and ends and self.proxy._should_lose(ends, before=False):
                    return  # the guard cuts both sides: the answer never arrives
            self.client.sendall(raw)


def main(argv: list[str] | None = None) -> None:
    """Run a proxy in a process of its own (so that it never waits for a busy client's
    GIL), losing a share of the commits and their answers alike; it prints its URI, then,
    when its input closes, how many it lost."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("uri", help="the server's bolt:// URI")
    parser.add_argument("--rate", type=float, default=0.02, help="share of write commits lost")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    faults = random.Random(args.seed)
    proxy = ReplyLosingProxy(args.uri)
    proxy.before = None  # asked as the commit goes and as its answer comes back
    proxy.lose = lambda statements: faults.random() < args.rate / 2
    print(proxy.uri, flush=True)
    sys.stdin.read()
    print(len(proxy.lost), flush=True)
    proxy.close()


if __name__ == "__main__":
    main()
