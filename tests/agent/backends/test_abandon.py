"""A stopped turn hangs up on the model server: the request waiting for it ends at once and the server sees
the client leave (llama-server then stops generating, and its one slot is free for the next request).

A real socket that takes the request and never answers (tests/silent_server.py); the real OpenAIBackend.
"""

from __future__ import annotations

import threading
import time

from silent_server import SilentServer
from snakegate.agent.backend import BackendError
from snakegate.agent.backends.choose import OpenAIBackend


def _until(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _request_in_thread(backend) -> tuple[threading.Thread, list[BackendError]]:
    """A turn's request, started in a thread of its own (as the chat's turn is); the BackendError it ends with."""
    failed: list[BackendError] = []

    def ask() -> None:
        try:
            backend.request([{"role": "user", "content": "profile the penguins"}], [])
        except BackendError as exc:
            failed.append(exc)

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    return asking, failed


def _abandon_once_asked(server: SilentServer, backend, asking: threading.Thread) -> None:
    """Abandon as soon as the server has the first request; the thread asking must then end (not time out)."""
    try:
        _until(lambda: server.request_lines, "the first request to arrive")
        backend.abandon()
        asking.join(10)
        assert not asking.is_alive()
    finally:
        server.stop()


def test_abandon_hangs_up_on_the_server_and_the_request_waiting_for_it_ends():
    server = SilentServer()
    backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=120, tool_mode="native")
    asking, failed = _request_in_thread(backend)
    try:
        _until(lambda: server.request_lines, "the request to arrive")
        assert backend.waiting is not None and backend.waiting.step == 1
        assert not server.hung_up.is_set()
        backend.abandon()
        assert server.hung_up.wait(10), "the server never saw the client leave"
        asking.join(10)
        assert not asking.is_alive()  # not the 120 s timeout
    finally:
        server.stop()
    assert server.request_lines == ["POST /v1/chat/completions HTTP/1.1"]
    assert len(failed) == 1 and backend.waiting is None


def test_abandon_with_nothing_out_cuts_nothing_and_the_backend_still_answers(openai_server):
    server = openai_server(["Hello."])
    backend = OpenAIBackend(server.base_url, "scripted-model", api_key="test-key", timeout=10, tool_mode="native")
    backend.abandon()
    assert backend.request([{"role": "user", "content": "hi"}], []).text == "Hello."
    backend.abandon()  # the finished request's connection is idle in the pool: the next one opens another
    assert server.replies == []
    server.add("Hello again.")
    assert backend.request([{"role": "user", "content": "hi"}], []).text == "Hello again."


def test_a_tool_mode_question_stopped_by_the_researcher_is_not_reported_as_a_server_out_of_reach():
    server = SilentServer()
    backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=120)  # auto: asks /props
    asking = threading.Thread(target=backend.settle_mode, daemon=True)
    asking.start()
    _abandon_once_asked(server, backend, asking)
    assert backend.mode is None  # asked again on the next request
    assert backend.mode_why == "asking the server was stopped; asked again on the next request"


def test_a_turn_stopped_while_its_tool_mode_is_asked_never_sends_the_chat_request():
    server = SilentServer()
    backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=120)  # auto: /props first
    asking, failed = _request_in_thread(backend)
    _abandon_once_asked(server, backend, asking)
    assert server.request_lines == ["GET /props HTTP/1.1"]  # no /api/show, no chat completion after the stop
    assert len(failed) == 1 and "stopped" in failed[0].message
