"""A server that takes every connection and never answers: a model server that hangs, for agent and TUI tests.

    server = SilentServer()            # listening on 127.0.0.1 at once
    server.base_url                    # "http://127.0.0.1:<port>/v1"
    server.request_lines               # "GET /props HTTP/1.1", ... in the order they arrived
    server.hung_up.wait(5)             # set once a client closed its side of a connection
    server.stop()

Each connection is read to its end (the client's request, then nothing until it hangs up) and never written to.
"""

from __future__ import annotations

import socket
import threading


class SilentServer:
    def __init__(self):
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"
        self.request_lines: list[str] = []
        self.hung_up = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, name="silent-server", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._socket.accept()
            except OSError:  # closed by stop()
                return
            self._held.append(conn)
            threading.Thread(target=self._read, args=(conn,), name="silent-connection", daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        try:
            self.request_lines.append(conn.makefile("rb").readline().decode("latin-1").strip())
            while conn.recv(65536):  # the request's headers and body, then nothing until the client leaves
                pass
        except OSError:  # stop() closed it
            return
        self.hung_up.set()

    def stop(self) -> None:
        self._socket.close()
        for conn in self._held:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
