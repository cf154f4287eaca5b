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


class Connections:
    """The sockets a client opened that are still open; `hook` goes into the client's request event hooks."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.cuts = 0  # how many times cut() was called: a failure after a cut is the cut, not the server

    def hook(self, request) -> None:
        """A request event hook: asks the connection pool to report the connections it opens for `request`."""
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: dict) -> None:
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._open = [s for s in self._open if s.fileno() != -1] + [sock]  # closed ones forgotten

    def cut(self) -> int:
        """Hang up every connection still open (the request waiting on one fails at once); how many."""
        with self._lock:
            live, self._open = [s for s in self._open if s.fileno() != -1], []
            self.cuts += 1
        for sock in live:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # ends a read blocked in another thread; the server sees a FIN
            except OSError:  # closed meanwhile by its own request
                pass
        return len(live)
