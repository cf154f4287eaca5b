"""`auto` mode asks a server whether it can call tools; a server that takes the connection and never answers
costs one short probe (PROBE_TIMEOUT, or the request timeout when that is shorter), not one per endpoint, and
the failure that follows says it never answered the probe either, without telling the researcher to start it.

A real listening socket that accepts every connection and never answers (tests/silent_server.py); the real
OpenAIBackend and Conversation.
"""

from __future__ import annotations

from silent_server import SilentServer
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.backends.openai_compat import PROBE_TIMEOUT
from snakegate.agent.events import BackendFailed
from snakegate.tui.present import backend_failed_text


def test_a_server_that_never_answers_the_probe_is_asked_once_and_the_header_says_so():
    server = SilentServer()
    try:
        backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=60)
        assert backend.settle_mode() is None  # not decided: asked again on the next request
    finally:
        server.stop()
    assert [line.split()[:2] for line in server.request_lines] == [["GET", "/props"]]  # not /api/show after it
    assert backend.mode_why == (f"the server did not answer /props within {PROBE_TIMEOUT:g} s; native tried, "
                                "asked again on the next request")


def test_a_request_timeout_shorter_than_the_probe_bounds_the_probe_too():
    server = SilentServer()
    try:
        backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=1)
        backend.settle_mode()
    finally:
        server.stop()
    assert backend.mode_why.startswith("the server did not answer /props within 1 s")


def test_a_hung_server_fails_the_turn_saying_it_never_answered_the_probe_either_and_not_to_start_it(
        make_conversation):
    server = SilentServer()
    try:
        convo = make_conversation(OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=1))
        (failed,) = [e for e in convo.send("profile the penguins") if isinstance(e, BackendFailed)]
    finally:
        server.stop()
    assert [line.split()[:2] for line in server.request_lines] == [["GET", "/props"],
                                                                  ["POST", "/v1/chat/completions"]]
    assert failed.message.startswith(f"the model server at {server.base_url} did not answer within 1 s (model "
                                     "`scripted-model`); it did not answer /props within 1 s either: it may be "
                                     "stuck rather than slow (its log says; restart it if so)")
    assert failed.reached is True
    notice = backend_failed_text(failed.message, failed.reached)
    assert "Check that the model server is running" not in notice and "Send again" in notice
    assert convo.messages[1:] == []  # the failed turn left nothing in the history


def test_the_step_of_a_request_counts_the_models_replies_since_the_researchers_message():
    from snakegate.agent.backend import step_of

    earlier = [{"role": "system", "content": "rules"}, {"role": "user", "content": "profile it"},
               {"role": "assistant", "content": "Which table?"}]
    assert step_of([*earlier, {"role": "user", "content": "the penguins"}]) == 1
    assert step_of([*earlier, {"role": "user", "content": "the penguins"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "{}"}]) == 2
