"""Secrets never reach the model: a sensitive value entered out of band (the masked field) is used in the draft
and never appears in any request body, the audit log or the history; a known one typed into the chat later is
sent as "<redacted>". Real scripted HTTP server (its raw request bodies), real OpenAIBackend, real gate.
"""

from __future__ import annotations

import pytest

from openai_server import call
from snakegate.agent.events import DraftReady, SecretRequested
from snakegate.agent.redact import PLACEHOLDER
from snakegate.errors import UserError

SECRET = "hunter2-s3cret-0042"
PASSWORD = "pw-nested-7781"


def validate(params: dict):
    return [call("validate_params", {"workflow": "secret-note", "params": params})]


def nowhere(convo, server, *values) -> None:
    """None of `values` in any request body, in the history or in the audit log."""
    for value in values:
        assert all(value not in body for body in server.raw_bodies), value
        assert all(value not in str(m) for m in convo.messages), value
        assert value not in convo.audit.path.read_text(), value


def test_describing_a_workflow_asks_for_its_sensitive_params_out_of_band(conversation):
    convo, _ = conversation([[call("describe_workflow", {"workflow": "secret-note"})], "Enter the token."])
    events = convo.send("write a secret note")
    assert [(e.workflow, e.param) for e in events if isinstance(e, SecretRequested)] == \
        [("secret-note", "token"), ("secret-note", "service.password")]


def test_values_entered_in_the_masked_field_reach_the_draft_and_never_the_model(conversation):
    convo, server = conversation([
        [call("describe_workflow", {"workflow": "secret-note"})], "Please enter the token and the password.",
        validate({"token": PLACEHOLDER, "service": {"password": PLACEHOLDER}, "label": "hi"}), "Draft ready."])
    convo.send("write a secret note")
    convo.set_sensitive("secret-note", "token", SECRET)
    events = convo.enter_sensitive("secret-note", "service.password", PASSWORD)
    (draft,) = [e.draft for e in events if isinstance(e, DraftReady)]
    assert draft.params["token"] == SECRET and draft.params["service"]["password"] == PASSWORD
    assert server.requests[2]["messages"][-1]["content"] == "(I entered `service.password` in the masked field.)"
    nowhere(convo, server, SECRET, PASSWORD)
    assert oct(draft.config_path.stat().st_mode & 0o777) == "0o600"


def test_a_known_secret_typed_into_the_chat_is_sent_as_redacted(conversation):
    convo, server = conversation(["Noted.", "Noted again."])
    convo.set_sensitive("secret-note", "token", SECRET)
    convo.send(f"my token is {SECRET}, please use it")
    convo.send("and again")
    assert server.requests[0]["messages"][-1]["content"] == f"my token is {PLACEHOLDER}, please use it"
    nowhere(convo, server, SECRET)


def test_a_secret_first_typed_into_the_chat_is_scrubbed_from_every_later_request(conversation):
    # Typed before anything marked it sensitive, the first request carries it (only the masked field
    # prevents that); once validate_params shows it is sensitive, no later request, history or log has it.
    convo, server = conversation([validate({"token": SECRET}), "Draft ready.", "You're welcome."])
    convo.send(f"write a note, token {SECRET}")
    convo.send("thanks")
    assert SECRET in server.raw_bodies[0]
    assert all(SECRET not in body for body in server.raw_bodies[1:])
    assert all(SECRET not in str(m) for m in convo.messages)
    assert SECRET not in convo.audit.path.read_text()


def test_setting_a_param_that_is_not_sensitive_is_refused(conversation):
    convo, _ = conversation([])
    with pytest.raises(UserError, match="not a sensitive parameter of secret-note.*token, service.password"):
        convo.set_sensitive("secret-note", "label", "x")
    with pytest.raises(UserError, match="empty value"):
        convo.set_sensitive("secret-note", "token", "")
