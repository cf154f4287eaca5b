"""A real HTTP server speaking the OpenAI chat-completions API, with scripted replies, for agent and TUI tests.

    from openai_server import ScriptedOpenAI, call

    server = ScriptedOpenAI([
        [call("search_workflows", {"query": "csv"})],     # a turn of tool calls
        "Here is what I found.",                          # a text turn
    ])
    base_url = server.start()          # "http://127.0.0.1:<port>/v1"; also `with ScriptedOpenAI(...) as base_url:`
    ...                                # point OpenAIBackend(base_url, "scripted-model") at it
    server.requests                    # the JSON bodies POSTed to /v1/chat/completions, in order
    server.raw_bodies                  # the same, as received text (assert a secret never arrived)
    server.stop()

Endpoints: `POST /v1/chat/completions` serves the next scripted reply per
request (non-streaming only), `GET /v1/models` lists `models`. A reply is
  - a str: an assistant text message;
  - a list of `call(name, arguments)`: an assistant message with those tool calls
    (arguments may be a dict, or a str sent verbatim, e.g. malformed JSON);
  - a dict: the assistant message exactly as given (wire format);
  - a callable(request_body) -> one of the above, for replies that depend on the request;
  - `completion(reply, finish_reason=..., model=..., usage=...)`: one of the above with the completion's own
    finish reason (e.g. "length"), answering model name and token counts;
  - `refuse(status, message, extra)`: an HTTP error for that request (e.g. a server that rejects tools); `extra`
    fields go into the error object beside the message (llama.cpp's `n_prompt_tokens`, `n_ctx`).
`props` (a dict) is served at `GET /props`, as llama.cpp's llama-server does (e.g. its chat_template_caps);
`show` (a dict) at `POST /api/show`, as Ollama does (e.g. {"capabilities": ["completion", "tools"]}).
A request naming a model not in `models` gets OpenAI's 404 `model_not_found`;
a wrong `api_key` (when one is set) gets 401; an exhausted script gets 500.
`bind()` reserves the port without listening, so the URL refuses connections
until `start()` (the "server is down, then up" case without a port race).
From another test folder: put this folder on sys.path (or import it by file path).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL = "scripted-model"


def call(name: str, arguments: dict | str | None = None, id: str | None = None) -> dict:
    """One tool call in the wire format; a str `arguments` is sent as is (for malformed JSON tests)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def act(mode: str, name: str, arguments: dict):
    """One step asking for an action, as a model answering in `mode` writes it: "native" tool calls, one
    constrained "json" object, or a "text"-form tool call in the message."""
    if mode == "native":
        return [call(name, arguments)]
    if mode == "json":
        return json.dumps({"action": name, "arguments": arguments}, indent=2)
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def says(mode: str, text: str) -> str:
    """A step that only talks, as a model answering in `mode` writes it."""
    return json.dumps({"say": text}) if mode == "json" else text


@dataclass(frozen=True)
class completion:  # noqa: N801 - reads like call(...) in a script
    """A scripted reply with the completion's own finish reason, answering model and token counts."""

    reply: Any
    finish_reason: str | None = None
    model: str | None = None
    usage: dict = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})


@dataclass(frozen=True)
class refuse:  # noqa: N801
    """A scripted HTTP error instead of a completion."""

    status: int
    message: str
    extra: dict = field(default_factory=dict)


class ScriptedOpenAI:
    def __init__(self, replies: list[Any] | None = None, *, models: tuple[str, ...] = (DEFAULT_MODEL,),
                 api_key: str | None = None, delay: float = 0.0, port: int = 0, props: dict | None = None,
                 show: dict | None = None):
        self.props = props
        self.show = show
        self.replies = list(replies or [])
        self.models = tuple(models)
        self.api_key = api_key
        self.delay = delay            # seconds to wait before each completion (to test "thinking" states)
        self.port = port
        self.requests: list[dict] = []
        self.raw_bodies: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def bind(self) -> str:
        """Take the port (connections are refused until start()); returns base_url."""
        if self._server is None:
            self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler(), bind_and_activate=False)
            self._server.daemon_threads = True
            self._server.server_bind()
            self.port = self._server.server_address[1]
        return self.base_url

    def start(self) -> str:
        """Listen and serve in a daemon thread; returns base_url."""
        self.bind()
        self._server.server_activate()
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
                self._thread.join(timeout=5)
            self._server.server_close()
        self._server = self._thread = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- replies ---------------------------------------------------------------------------------
    def add(self, *replies: Any) -> None:
        """Append replies to the script (e.g. between turns of a test)."""
        with self._lock:
            self.replies.extend(replies)

    def _message(self, reply: Any, body: dict) -> dict:
        if callable(reply):
            reply = reply(body)
        if isinstance(reply, str):
            return {"role": "assistant", "content": reply}
        if isinstance(reply, list):
            calls = [dict(c, id=c.get("id") or f"call_{next(self._ids)}") for c in reply]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        if isinstance(reply, dict):
            return reply
        raise TypeError(f"a scripted reply must be a str, a list of call(...), a dict or a callable, got {reply!r}")

    def _complete(self, body: dict, authorization: str | None) -> tuple[int, dict]:
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            return 401, _error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        model = body.get("model")
        if model not in self.models:
            return 404, _error(f"The model `{model}` does not exist or you do not have access to it.",
                               "invalid_request_error", "model_not_found")
        if body.get("stream"):
            return 400, _error("this scripted server does not stream; call without stream=true",
                               "invalid_request_error", None)
        with self._lock:
            if not self.replies:
                return 500, _error("the scripted server has no reply left: add more replies to the test's script",
                                   "server_error", None)
            reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, (completion, refuse)):
            reply = reply(body)
        if isinstance(reply, refuse):
            error = _error(reply.message, "invalid_request_error" if reply.status < 500 else "server_error", None)
            error["error"].update(reply.extra)
            return reply.status, error
        extra = reply if isinstance(reply, completion) else completion(reply)
        message = self._message(extra.reply, body)
        if self.delay:
            time.sleep(self.delay)
        return 200, {
            "id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion", "created": 0,
            "model": extra.model or model,
            "choices": [{"index": 0, "message": message, "finish_reason": extra.finish_reason or
                         ("tool_calls" if message.get("tool_calls") else "stop")}],
            "usage": extra.usage,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test): nothing to report

            def do_GET(self):
                if self.path.rstrip("/") == "/props" and server.props is not None:
                    self._send(200, server.props)
                elif self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in server.models]})
                else:
                    self._send(404, _error(f"no route GET {self.path}", "invalid_request_error", None))

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
                if self.path.rstrip("/") == "/api/show" and server.show is not None:
                    self._send(200, server.show)
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, _error(f"no route POST {self.path}", "invalid_request_error", None))
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, _error("the request body is not JSON", "invalid_request_error", None))
                    return
                with server._lock:
                    server.raw_bodies.append(raw)
                    server.requests.append(json.loads(raw))
                status, payload = server._complete(body, self.headers.get("Authorization"))
                self._send(status, payload)

        return Handler


def _error(message: str, type_: str, code: str | None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}
