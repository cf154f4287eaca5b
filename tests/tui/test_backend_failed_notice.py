"""A failed model turn's notice in the chat says what the researcher can do, and only that (issue 26 §5): when the
server answered (an error status), it is running, so the notice does not tell them to check that it runs; when
nothing answered, it does.

Textual's pilot at 80x24, the scripted OpenAI-compatible server (a real HTTP server) and the real OpenAIBackend.
"""

from __future__ import annotations

import asyncio
import socket

from chat_pilot import SIZE, connected, say, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, refuse

CHECK = "Check that the model server is running"


def notice_after(make_app, base_url: str) -> str:
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=base_url, tool_mode="native")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "profile my penguins table")
            await wait_until(pilot, lambda: "could not answer" in transcript_text(app), 60, "the failure notice")
            return transcript_text(app)

    return asyncio.run(scenario())


def transcript_text(app) -> str:
    from textual.widgets import Static

    return "\n".join(str(w.content) for w in app.query(Static) if "could not answer" in str(w.content))


def test_a_server_that_answered_with_an_error_is_not_said_to_be_down(make_app):
    server = ScriptedOpenAI([refuse(500, "the model crashed while loading")])
    try:
        text = notice_after(make_app, server.start())
    finally:
        server.stop()
    assert "The model could not answer" in text and "Send again" in text
    assert CHECK not in text


def test_a_server_that_does_not_answer_is_said_to_be_unreachable_with_the_fix(make_app):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    text = notice_after(make_app, f"http://127.0.0.1:{port}/v1")
    assert CHECK in text and "snakegate chat --guided" in text
