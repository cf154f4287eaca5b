"""The open connections to a model server, so that a turn the researcher stopped hangs up on the server.

A request waits in a blocking read for as long as the model generates (minutes on a CPU). Left to its
timeout after the researcher pressed Esc, it keeps the server generating for nobody, and a one-slot
llama-server then makes the next request wait behind it. `Connections` notes each socket as the HTTP
client connects it (through the `trace` request extension every httpx-style client passes to its
connection pool; set by an event hook, so nothing private is touched) and `cut()` shuts them down: the
blocked read ends at once and the server sees the client leave (llama-server then stops generating).
It never reads, writes or closes anything else; a socket already closed is forgotten.
"""

from __future__ import annotations

import socket
import threading


class Stopped(Exception):
    """Raised by the event hook: the request's turn was stopped before it reached the server."""


class Connections:
    """The sockets a client opened that are still open; `hook` goes into the client's request event hooks.

    `begin()` marks the start of a request in the calling thread: a cut after it stops that thread's later
    requests too (the turn goes on in its thread until it notices it was stopped), before they are sent."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._thread = threading.local()
        self.cuts = 0  # how many times cut() was called: a failure after a cut is the cut, not the server

    def begin(self) -> None:
        self._thread.cuts = self.cuts

    def stopped(self) -> bool:
        """Whether a cut came after this thread's `begin()` (never, in a thread that did not begin)."""
        return getattr(self._thread, "cuts", self.cuts) != self.cuts

    def hook(self, request) -> None:
        """A request event hook: a stopped request goes no further; any other reports the connections the
        pool opens for it."""
        if self.stopped():
            raise Stopped("the researcher stopped this turn")
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: dict) -> None:
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            if not self.stopped():
                self._open = [s for s in self._open if s.fileno() != -1] + [sock]  # closed ones forgotten
                return
        _hang_up(sock)  # cut while it was connecting: the request would reach a server nobody waits for

    def cut(self) -> int:
        """Hang up every connection still open (the request waiting on one fails at once); how many."""
        with self._lock:
            live, self._open = [s for s in self._open if s.fileno() != -1], []
            self.cuts += 1
        for sock in live:
            _hang_up(sock)
        return len(live)


def _hang_up(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # ends a read blocked in another thread; the server sees a FIN
    except OSError:  # closed meanwhile by its own request
        pass
