"""Turns as the chat UI needs them: events as they happen, an abandoned turn leaves no trace, starting over
and moving to another workflow withdraw the draft, a sensitive value set out of band never reaches the model.

Real scripted OpenAI-compatible server, real OpenAIBackend, real gate.
"""

from __future__ import annotations

import threading
import time

from openai_server import call
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftCleared, DraftReady, SecretRequested
from snakegate.agent.redact import PLACEHOLDER

PENGUINS = "data/examples/tabular-penguins.csv"
SECRET = "hunter2-s3cret-0042"


def validated(params=None, workflow="tabular-profile"):
    return [call("validate_params", {"workflow": workflow, "params": params or {"dataset_file": PENGUINS}})]


def test_each_event_is_reported_as_it_happens_not_only_at_the_end(conversation):
    convo, server = conversation([[call("search_workflows", {"query": "csv"})], validated(), "Ready."])
    seen: list[tuple[str, int]] = []
    events = convo.send("profile the penguins", on_event=lambda e: seen.append((type(e).__name__,
                                                                                len(server.requests))))
    assert [name for name, _ in seen] == ["ActionCalled", "ActionCalled", "DraftReady", "AssistantSaid"]
    assert seen[0][1] == 1  # the first action was reported before the model was asked again
    assert [type(e).__name__ for e in events] == [name for name, _ in seen]


def test_an_abandoned_turn_leaves_no_trace_and_the_next_turn_starts_at_once(conversation):
    # the abandoned request gets the validation, the next one the greeting
    convo, server = conversation([validated(), "Hello again."], delay=1.5)
    before = list(convo.messages)
    cancel = threading.Event()
    results: list = []
    worker = threading.Thread(target=lambda: results.append(convo.send("profile the penguins", cancel=cancel)))
    worker.start()
    time.sleep(0.3)  # the model request is out
    cancel.set()
    started = time.monotonic()
    events = convo.send("hello")  # does not wait for the abandoned request
    assert time.monotonic() - started < 1.5 + 0.5  # only its own (delayed) request
    worker.join(timeout=10)
    assert results == [[]]
    assert [type(e) for e in events] == [AssistantSaid]
    assert convo.messages == before + [{"role": "user", "content": "hello"},
                                       {"role": "assistant", "content": "Hello again."}]
    assert convo.draft is None  # the abandoned turn's validation (if it got that far) is gone too
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": "hello"}
    assert all(m.get("content") != "profile it" for m in server.requests[-1]["messages"])


def test_restart_withdraws_the_draft_and_forgets_the_history(conversation):
    convo, server = conversation([validated(), "Draft ready."])
    convo.send("profile the penguins")
    assert convo.draft is not None
    events = convo.send("restart")
    assert isinstance(events[0], DraftCleared) and isinstance(events[-1], AssistantSaid)
    assert convo.draft is None
    assert [m["role"] for m in convo.messages] == ["system"]
    assert len(server.requests) == 2  # starting over asks the model nothing


def test_describing_another_workflow_withdraws_the_draft(conversation):
    convo, _ = conversation([validated(), "Draft ready.",
                             [call("describe_workflow", {"workflow": "secret-note"})], "It needs a token."])
    convo.send("profile the penguins")
    first = convo.draft
    assert first is not None
    events = convo.send("now write a secret note instead")
    # (secret-note's two sensitive params are offered for the masked field as it is described)
    assert [type(e) for e in events] == [DraftCleared, ActionCalled, SecretRequested, SecretRequested, AssistantSaid]
    assert convo.draft is None
    assert "secret-note" in events[0].reason


def test_describing_the_same_workflow_keeps_the_draft(conversation):
    convo, _ = conversation([validated(), "Draft ready.",
                             [call("describe_workflow", {"workflow": "tabular-profile"})], "Here it is."])
    convo.send("profile the penguins")
    draft = convo.draft
    convo.send("what does missing_strategy do?")
    assert convo.draft is draft


def test_a_sensitive_value_set_out_of_band_is_used_and_never_sent(conversation):
    convo, server = conversation([
        validated({"token": PLACEHOLDER, "label": "hi"}, workflow="secret-note"), "Draft ready."])
    convo.set_sensitive("secret-note", "token", SECRET)
    events = convo.send("set token=<redacted>")
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert drafts and drafts[0].params["token"] == SECRET
    assert all(SECRET not in body for body in server.raw_bodies)
    assert all(SECRET not in str(m) for m in convo.messages)
