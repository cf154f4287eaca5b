"""The MCP SDK's own client against a real `snakegate mcp` process, driven from synchronous tests.

    with McpSession.stdio(registry, answer=accept("Grace Hopper")) as s:
        s.tools()                              # tools/list
        r = s.call("validate_params", {...})   # tools/call -> CallToolResult (s.result(r): its JSON)
        s.elicitations                         # every ElicitRequestParams the server sent, in order
        s.responses                            # the text of every tools/call answer
        s.progress                             # every (progress, total, message) notification of s.call

The client runs in an anyio blocking portal (an event loop in a thread), so
one server process serves a whole test. `answer` is what the person does
when asked to confirm: an `ElicitResult`, or None for a client that declares
no elicitation at all. `mode` is the SDK's connect mode: "auto" negotiates
the 2026-07-28 protocol (confirmations ride InputRequiredResult), "legacy"
the handshake protocol (a standalone elicitation/create request).
`McpSession.http(url, ...)` talks to a server started with `--http`
(`start_http_server`), which the test stops by PID.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult, Implementation

from registry_copies import LABEL_PARAM, TOKEN_PARAM, clean_env, note_workflow

# Its contract marks `token` x-sensitive; the gate can build its DAG (nothing here ever runs it).
SECRET_NOTE = note_workflow("secret-note", "Secret note", "Writes a note using an API token that must never reach "
                            "a model.", {"label": LABEL_PARAM, "token": TOKEN_PARAM})
PENGUINS = "data/examples/tabular-penguins.csv"
CLIENT = Implementation(name="snakegate-tests", version="1.2.3")
CALL_TIMEOUT = 240  # seconds: a whole tabular-profile run on a loaded 2-core machine fits easily


def accept(name: str = "Grace Hopper", run: bool = True) -> ElicitResult:
    return ElicitResult(action="accept", content={"run": run, "approved_by": name})


def decline() -> ElicitResult:
    return ElicitResult(action="decline")


def cancel() -> ElicitResult:
    return ElicitResult(action="cancel")


def server_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "snakegate.cli", "mcp", *extra]


class McpSession:
    def __init__(self, target, *, answer: ElicitResult | None, mode: str = "auto"):
        self.target = target
        self.answer = answer
        self.mode = mode
        self.elicitations: list = []
        self.progress: list[tuple] = []
        self.responses: list[str] = []   # every tools/call answer's text, in order

    @classmethod
    def stdio(cls, registry: Path, *, answer: ElicitResult | None = None, mode: str = "auto") -> "McpSession":
        params = StdioServerParameters(command=sys.executable, args=server_command()[1:], cwd=str(registry),
                                       env=clean_env())
        return cls(params, answer=answer, mode=mode)

    @classmethod
    def http(cls, url: str, *, answer: ElicitResult | None = None, mode: str = "auto") -> "McpSession":
        return cls(url, answer=answer, mode=mode)

    async def _elicit(self, context, params):
        self.elicitations.append(params)
        return self.answer

    async def _progress(self, progress, total, message):
        self.progress.append((progress, total, message))

    def __enter__(self) -> "McpSession":
        self._portal_cm = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        client = Client(self.target, mode=self.mode, client_info=CLIENT, read_timeout_seconds=CALL_TIMEOUT,
                        elicitation_callback=self._elicit if self.answer is not None else None)
        try:
            self._client_cm = self.portal.wrap_async_context_manager(client)
            self.client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._client_cm.__exit__(*exc)
        finally:
            self._portal_cm.__exit__(None, None, None)

    def _run(self, fn, *args, **kw):
        async def bounded():
            with anyio.fail_after(CALL_TIMEOUT):
                return await fn(*args, **kw)
        return self.portal.call(bounded)

    def tools(self):
        return self._run(self.client.list_tools).tools

    def resources(self):
        return self._run(self.client.list_resources).resources

    def read(self, uri: str):
        return self._run(self.client.read_resource, uri)

    def prompts(self):
        return self._run(self.client.list_prompts).prompts

    def prompt(self, name: str, arguments: dict | None = None):
        return self._run(self.client.get_prompt, name, arguments)

    def call(self, name: str, arguments: dict):
        result = self._run(partial(self.client.call_tool, name, arguments, progress_callback=self._progress))
        self.responses += [c.text for c in result.content if getattr(c, "text", None)]
        return result

    def call_and_cancel(self, name: str, arguments: dict) -> None:
        """tools/call, cancelled by the client as soon as a progress notification carries a job total."""
        async def cancel_on_progress():
            seen = anyio.Event()

            async def progress(done, total, message):
                self.progress.append((done, total, message))
                if total:
                    seen.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(partial(self.client.call_tool, name, arguments, progress_callback=progress))
                await seen.wait()
                tg.cancel_scope.cancel()
        self._run(cancel_on_progress)

    @staticmethod
    def result(call_result) -> dict:
        """The tool's JSON answer (the text content; structured content carries the same)."""
        return json.loads(call_result.content[0].text)


# ---- an HTTP server process ----------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http_server(registry: Path, port: int, timeout: float = 60) -> subprocess.Popen:
    """`snakegate mcp --http --port PORT` in the registry; returns once the port accepts connections."""
    proc = subprocess.Popen(server_command("--http", "--port", str(port)), cwd=registry, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"snakegate mcp --http exited {proc.returncode}: {proc.stderr.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.2)
    stop_http_server(proc)
    raise AssertionError(f"snakegate mcp --http did not listen on port {port} within {timeout} s")


def stop_http_server(proc: subprocess.Popen) -> str:
    """Stop the server by its PID (SIGTERM: uvicorn shuts down cleanly); returns its stderr."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stderr.read() if proc.stderr else ""


# ---- what the server left behind -----------------------------------------------------------------
def audit_lines(root: Path) -> list[dict]:
    """Every call line of every MCP server run in this registry, in order."""
    lines = []
    for path in sorted((root / ".snakegate" / "audit").glob("mcp-*/calls.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines


def audit_text(root: Path) -> str:
    return "\n".join(p.read_text() for p in (root / ".snakegate" / "audit").rglob("*") if p.is_file())


def run_folders(root: Path) -> list[Path]:
    runs = root / "runs"
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
