"""A secret typed into a message is caught before it is sent (issue 22 §6): provider key formats, "password is
X", a value next to a sensitive param's name. The conversation refuses such a message until the person says
what it is; once a value is known secret it is "<redacted>" in every request and in the audit log, the lines
already written included (rewritten whole, still 0600). `snakegate ask` refuses such a request with exit 2.

Real scripted OpenAI-compatible HTTP server (its raw request bodies), real OpenAIBackend, real audit files.
"""

from __future__ import annotations

import json
import stat

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from snakegate.agent.controller import SecretSuspected
from snakegate.agent.redact import PLACEHOLDER
from snakegate.agent.secretscan import find_secrets

OPENAI_KEY = "sk-proj-Q7x9Lm2Vb4Nc6Zt8Rw1Ys3Ua5"
GITHUB_TOKEN = "ghp_" + "Ab3De5Gh7Jk9Mn2Pq4St6Vw8Yz1Bc3Df5Gh"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.Xk3v9Lq2Wm8Tz5Rb7Ny1Pc4"
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
TOKEN = "tok-3c1e9a7f5b2d"


def values(text: str, sensitive=()) -> list[tuple[str, str | None]]:
    return [(s.value, s.param) for s in find_secrets(text, list(sensitive))]


@pytest.mark.parametrize("text, value", [
    (f"please use {OPENAI_KEY} for the model", OPENAI_KEY),
    (f"clone it with {GITHUB_TOKEN}", GITHUB_TOKEN),
    ("my AWS key AKIAIOSFODNN7EXAMPLE is in there", "AKIAIOSFODNN7EXAMPLE"),
    ("post to slack with xoxb-2481-9a8b7c6d5e", "xoxb-2481-9a8b7c6d5e"),
    (f"the service answers {JWT}", JWT),
    (f"here is the deploy key:\n{PEM}\nthanks", PEM),
    ("my password is hunter2!", "hunter2!"),
    ("api key: 'Zq8 x7 w6'", "Zq8 x7 w6"),
    ("the secret = 9f8e7d6c", "9f8e7d6c"),
])
def test_provider_keys_and_phrases_naming_a_secret_are_found(text, value):
    assert values(text) == [(value, None)]


@pytest.mark.parametrize("text", [
    "profile data/examples/tabular-penguins.csv, fill missing values with the median",
    "the key column is species", "the key is sample_id", "sort key: date",
    "sk-learn has a random forest", "the token is required", "my password is not set yet",
    "(I entered `token` in the masked field.)", "the api key is <redacted>",
])
def test_ordinary_sentences_are_not_secrets(text):
    assert values(text, ["token"]) == []


@pytest.mark.parametrize("text", [
    f"token {TOKEN}", f"my token is {TOKEN}.", f"set token to {TOKEN}", f"use {TOKEN} as the token",
    f"token={TOKEN} and label=hello",
])
def test_a_value_next_to_a_sensitive_params_name_is_a_value_for_it(text):
    assert values(text, ["token"]) == [(TOKEN, "token")]


def test_a_nested_sensitive_param_is_known_by_its_last_name_too():
    assert values("the service password: Pw-8812x", ["service.password"]) == [("Pw-8812x", "service.password")]


def held_back(convo, server, text: str) -> SecretSuspected:
    with pytest.raises(SecretSuspected) as caught:
        convo.send(text)
    assert server.requests == []
    return caught.value


def test_a_message_with_a_key_is_neither_sent_nor_logged(conversation):
    convo, server = conversation(["Noted."])
    refused = held_back(convo, server, f"use my key {OPENAI_KEY} and profile the penguins")
    assert [s.kind for s in refused.suspects] == ["an API key (sk-…)"]
    assert OPENAI_KEY not in refused.message and "`sk-p…`" in refused.message
    assert OPENAI_KEY not in convo.audit.path.read_text()
    assert all(OPENAI_KEY not in str(m) for m in convo.messages)


def test_a_key_marked_secret_reaches_the_model_and_the_audit_log_as_redacted(conversation):
    convo, server = conversation(["Noted.", "Still noted."])
    text = f"use my key {OPENAI_KEY} and profile the penguins"
    held_back(convo, server, text)
    convo.mark_secret([OPENAI_KEY])
    convo.send(text)
    convo.send(f"again: {OPENAI_KEY}")  # known now: sent redacted without asking
    assert server.requests[0]["messages"][-1]["content"] == f"use my key {PLACEHOLDER} and profile the penguins"
    assert all(OPENAI_KEY not in body for body in server.raw_bodies)
    assert OPENAI_KEY not in convo.audit.path.read_text()
    assert stat.S_IMODE(convo.audit.path.stat().st_mode) == 0o600


def test_a_value_said_to_be_no_secret_is_sent_as_typed(conversation):
    convo, server = conversation(["Noted."])
    text = "the secret = 9f8e7d6c is the sample's code name"
    held_back(convo, server, text)
    convo.mark_not_secret(["9f8e7d6c"])
    convo.send(text)
    assert server.requests[0]["messages"][-1]["content"] == text


def test_a_value_for_the_workflow_being_filled_is_held_back_naming_its_param(conversation):
    convo, server = conversation([[call("describe_workflow", {"workflow": "secret-note"})], "Enter the token."])
    convo.send("write a secret note")
    with pytest.raises(SecretSuspected) as caught:
        convo.send(f"the token is {TOKEN}")
    assert [(s.value, s.param) for s in caught.value.suspects] == [(TOKEN, "token")]
    assert len(server.requests) == 2 and all(TOKEN not in body for body in server.raw_bodies)


def test_lines_already_logged_are_rewritten_once_a_value_is_known_secret(conversation):
    # a value first said to be no secret, with characters JSON escapes, later marked secret after all
    value = 'pa"ss\\wd-4411'
    convo, server = conversation(["Noted.", "Forgotten."])
    text = f"my password is {value}"
    held_back(convo, server, text)
    convo.mark_not_secret([value])
    convo.send(text)
    logged = convo.audit.path.read_text()
    assert json.dumps(value)[1:-1] in logged
    convo.mark_secret([value])
    convo.send("forget it")
    logged = convo.audit.path.read_text()
    assert value not in logged and json.dumps(value)[1:-1] not in logged
    assert stat.S_IMODE(convo.audit.path.stat().st_mode) == 0o600
    seqs = [json.loads(line)["seq"] for line in logged.splitlines()]
    assert seqs == list(range(1, len(seqs) + 1))  # every line kept, in order
    assert value not in server.raw_bodies[1]


def test_ask_refuses_a_request_with_a_key_and_sends_nothing(agent_registry, cli):
    server = ScriptedOpenAI(["I would never see this."])
    try:
        code, out, err = cli("--registry", agent_registry, "ask", f"profile the penguins, my key is {OPENAI_KEY}",
                             "--model", DEFAULT_MODEL, "--base-url", server.start(), "--tool-mode", "native")
    finally:
        server.stop()
    assert code == 2
    assert "the request was not sent" in err and "an API key (sk-…)" in err and OPENAI_KEY not in out + err
    assert server.requests == []
    logs = list((agent_registry / ".snakegate" / "audit").glob("*.jsonl"))
    assert logs and all(OPENAI_KEY not in p.read_text() for p in logs)
