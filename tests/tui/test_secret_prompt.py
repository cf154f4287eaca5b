"""The chat holds back a message with something secret-shaped in it (issue 22 §6): it asks the person first
(send it as <redacted>, edit it, or send it as typed), and a value typed for a sensitive param of the workflow
being filled moves into that param's masked field. Nothing secret reaches the model's requests, the audit log
or the screen. Textual's pilot at 80x24, the scripted OpenAI-compatible HTTP server, the real conversation.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Input

from chat_pilot import SECRET, SIZE, connected, say, screen_text, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from snakegate.agent.redact import MASKED_NOTE, PLACEHOLDER
from snakegate.tui.secret_question import SecretQuestion

KEY = "sk-proj-Q7x9Lm2Vb4Nc6Zt8Rw1Ys3Ua5"


def audit_text(registry) -> str:
    return (registry / ".snakegate" / "audit" / "c-tui-test.jsonl").read_text()


async def submit(pilot, text: str) -> None:
    app = pilot.app
    app.query_one("#prompt", Input).value = text
    await pilot.press("enter")
    await pilot.pause()


def test_a_key_typed_into_the_chat_is_asked_about_and_sent_redacted(make_app, chat_registry):
    server = ScriptedOpenAI(["Noted: I will not need it."])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await submit(pilot, f"use my key {KEY} please")
            await wait_until(pilot, lambda: isinstance(app.screen, SecretQuestion), what="the secret question")
            question = screen_text(app)
            assert "an API key (sk-…)" in question and KEY not in question
            assert server.requests == []  # asked first: nothing has gone anywhere
            await pilot.click("#redact")
            await wait_until(pilot, lambda: not app.thinking and len(server.requests) == 1, 30, "the answer")
            assert KEY not in screen_text(app)

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    assert server.requests[0]["messages"][-1]["content"] == f"use my key {PLACEHOLDER} please"
    assert all(KEY not in body for body in server.raw_bodies)
    assert KEY not in audit_text(chat_registry)


def test_escape_puts_the_message_back_to_edit_and_sends_nothing(make_app, chat_registry):
    server = ScriptedOpenAI([])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())
    text = f"my password is hunter2-{SECRET}"

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await submit(pilot, text)
            await wait_until(pilot, lambda: isinstance(app.screen, SecretQuestion), what="the secret question")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.screen_stack[0], what="the question to close")
            assert app.query_one("#prompt", Input).value == text and not app.thinking

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    assert server.requests == []
    assert SECRET not in audit_text(chat_registry)


def test_a_value_typed_for_a_sensitive_param_lands_in_its_masked_field(make_app, chat_registry):
    server = ScriptedOpenAI([
        [call("describe_workflow", {"workflow": "api-note"})],
        "It needs an API token: type it in the masked field on the right.",
        "Thanks, the token is entered.",
    ])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "write an api note")
            await submit(pilot, f"my token is {SECRET}")
            field = app.query_one("#secret-token", Input)
            await wait_until(pilot, lambda: app.focused is field, what="the masked field to take the value")
            assert field.value == SECRET and field.password
            assert app.query_one("#prompt", Input).value == f"my token is {PLACEHOLDER}"
            assert len(server.requests) == 2 and SECRET not in screen_text(app)
            await pilot.press("enter")  # the person enters it from the masked field, as always
            await wait_until(pilot, lambda: not app.thinking and len(server.requests) == 3, 30, "the entered turn")

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    assert server.requests[2]["messages"][-1]["content"] == MASKED_NOTE.format(param="token")
    assert all(SECRET not in body for body in server.raw_bodies)
    assert SECRET not in audit_text(chat_registry)
