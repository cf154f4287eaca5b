"""The chat app driven through Textual's pilot at 80x24: the first paint, drafts, the approval that runs one
draft once, masked sensitive fields, model turns that can be stopped, failures that keep the message.

Runs of Snakemake here are of one-job workflows (a few seconds each); the full workflow, the history, fork,
cancel and failure flows are in test_run_flow.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

from textual.widgets import Button, Input

from chat_pilot import (SECRET, SIZE, approve_and_wait, connected, draft_penguins, say, screen_lines, screen_text,
                        text_of, type_secret, wait_until)
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from snakegate.agent.redact import MASKED_NOTE, PLACEHOLDER as AGENT_PLACEHOLDER
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings
from snakegate.tui import present
from snakegate.tui.app import ChatApp
from snakegate.tui.dialogs import Confirm
from snakegate.tui.present import GUIDED_LABEL, MASK


def test_the_first_screen_paints_before_the_registry_is_loaded(chat_registry):
    release = threading.Event()

    def slow_connect():  # what build_app's connect does, held back until the test lets it go
        from snakegate.agent.backends.choose import make_backend
        from snakegate.agent.controller import Conversation

        release.wait(30)
        settings = load_settings(chat_registry)
        return Conversation(Registry.load(chat_registry), settings, make_backend(settings, guided=True))

    app = ChatApp(slow_connect, approved_by="Ada Tester", settings=load_settings(chat_registry))

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            shown = screen_lines(app)
            assert "snakegate chat" in shown and "No draft yet" in shown and "Type here" in shown
            assert app.sub_title == present.LOADING and app.conversation is None
            release.set()
            await connected(pilot)
            assert "offline guided dialogue" in screen_text(app)
            assert app.sub_title == GUIDED_LABEL

    asyncio.run(scenario())


def test_ctrl_r_without_a_draft_says_why_in_the_panel(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            assert app.query_one("#approve", Button).disabled
            assert app.focused is app.query_one("#prompt", Input)
            await pilot.press("ctrl+r")
            await pilot.pause()
            status = text_of(app.query_one("#draft-status"))
            assert status.startswith("Nothing to approve yet") and "no draft has passed the gate" in status
            assert app.conversation.draft is None and not app.running
            assert not (chat_registry / "runs").exists()

    asyncio.run(scenario())


def test_a_draft_runs_once_and_a_repeat_needs_a_confirmation_that_says_so(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "api-note")
            await type_secret(pilot, "token", SECRET)
            await say(pilot, "done")
            assert text_of(app.query_one("#draft-status")).startswith("● Ready")
            first = await approve_and_wait(pilot, timeout=120)
            assert first.startswith("✓ succeeded"), first
            status = text_of(app.query_one("#draft-status"))
            assert status.startswith("◆ Used") and "succeeded" in status
            assert "Run again" in str(app.query_one("#approve", Button).label)

            await pilot.press("ctrl+r")  # no silent re-run: a question that names the earlier run
            await wait_until(pilot, lambda: isinstance(app.screen, Confirm), what="the repeat question")
            question = text_of(app.screen.query_one(".dialog-question"))
            assert "already ran as run" in question and "repeat" in question
            await pilot.press("escape")  # keep it: nothing runs
            await pilot.pause()
            assert not app.running and len(list((chat_registry / "runs").iterdir())) == 1

            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: isinstance(app.screen, Confirm), what="the repeat question")
            await pilot.click("#yes")
            await wait_until(pilot, lambda: app.running, 30, "the repeat to start")
            await wait_until(pilot, lambda: not app.running, 120, "the repeat to finish")
            assert text_of(app.query_one("#run-status")).startswith("✓ succeeded")
            assert len(list((chat_registry / "runs").iterdir())) == 2

    asyncio.run(scenario())


def test_restart_clears_the_panel_so_the_old_draft_cannot_be_approved(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            assert app.shown_draft is not None
            await say(pilot, "restart")
            assert app.shown_draft is None and app.conversation.draft is None
            assert "tabular-profile" not in text_of(app.query_one("#draft-summary"))
            assert text_of(app.query_one("#draft-status")).startswith("Withdrawn")
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert "the draft was withdrawn" in text_of(app.query_one("#draft-status"))
            assert not app.running and not (chat_registry / "runs").exists()

    asyncio.run(scenario())


def test_moving_on_to_another_workflow_clears_the_panel(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            assert app.shown_draft is not None and app.shown_draft.workflow == "tabular-profile"
            await say(pilot, "api-note")  # the researcher starts filling another workflow
            assert app.shown_draft is None and app.conversation.draft is None
            assert app.query_one("#approve", Button).disabled
            assert "moved on to api-note" in text_of(app.query_one("#draft-status"))
            assert any("draft withdrawn" in text_of(n) for n in app.query(".note"))
            assert app.query("#secret-token")  # and is asked for its token in the masked field

    asyncio.run(scenario())


def test_a_sensitive_value_is_typed_in_the_masked_field_and_shown_nowhere(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "api-note")
            field = app.query_one("#secret-token", Input)
            assert field.password
            await type_secret(pilot, "token", SECRET)
            await say(pilot, "done")
            draft = app.conversation.draft
            assert draft is not None and draft.params["token"] == SECRET  # the real value stays in the draft
            params = text_of(app.query_one("#draft-params"))
            assert MASK in params and SECRET not in params
            assert SECRET not in screen_text(app)
            assert all(SECRET not in json.dumps(m) for m in app.conversation.messages)  # nor in the history

    asyncio.run(scenario())


def test_a_sensitive_value_from_the_masked_field_never_reaches_the_model(make_app):
    server = ScriptedOpenAI([
        [call("describe_workflow", {"workflow": "api-note"})],
        "It needs an API token: type it in the masked field on the right.",
        [call("validate_params", {"workflow": "api-note", "params": {"token": AGENT_PLACEHOLDER}})],
        "The draft is ready: approve it in the panel.",
    ])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "write an api note")
            await type_secret(pilot, "token", SECRET)
            draft = app.conversation.draft
            assert draft is not None and draft.params["token"] == SECRET
            assert SECRET not in screen_text(app)

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    assert len(server.requests) == 4
    assert all(SECRET not in body for body in server.raw_bodies)
    assert server.requests[2]["messages"][-1]["content"] == MASKED_NOTE.format(param="token")


def test_a_failed_message_stays_in_the_input_and_sending_again_works(make_app):
    server = ScriptedOpenAI(["Hello from the model."])
    base_url = server.bind()  # the port is reserved but refuses connections until start()
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=base_url)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            assert app.sub_title.endswith(f" · {DEFAULT_MODEL} @ {base_url}")  # after the tool mode (status.py)
            await say(pilot, "hello there")
            errors = app.query(".error")
            assert len(errors) == 1
            notice = text_of(errors.first())
            assert "cannot reach" in notice and base_url in notice and "back in the input" in notice
            prompt = app.query_one("#prompt", Input)
            assert prompt.value == "hello there" and not prompt.disabled

            server.start()
            await pilot.press("enter")  # the same text, as it stands in the input
            await wait_until(pilot, lambda: not app.thinking and "Hello from the model." in screen_text(app))
            assert prompt.value == "" and len(app.query(".error")) == 1

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_esc_stops_a_model_turn_at_once_and_the_message_goes_back(make_app):
    server = ScriptedOpenAI(["This answer comes too late.", "Hello again."], delay=20)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            prompt = app.query_one("#prompt", Input)
            prompt.value = "summarise everything"
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(server.requests) == 1, what="the request to be sent")
            assert app.thinking
            started = time.monotonic()
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.thinking, 2, "the turn to stop")
            assert time.monotonic() - started < 2
            assert prompt.value == "summarise everything"
            assert "stopped" in screen_text(app)

            server.delay = 0
            prompt.value = "hello"
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.thinking and "Hello again." in screen_text(app), 10)
            assert "too late" not in screen_text(app)

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    # the stopped message left no trace: the next request carries only the greeting and "hello"
    users = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["hello"]


def test_each_action_shows_while_the_turn_goes_on(make_app):
    server = ScriptedOpenAI([[call("search_workflows", {"query": "csv"})],
                             [call("describe_workflow", {"workflow": "tabular-profile"})],
                             "tabular-profile fits: which table?"], delay=1.0)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.query_one("#prompt", Input).value = "profile my penguins csv table"
            await pilot.press("enter")
            await wait_until(pilot, lambda: "✓ search_workflows" in screen_text(app), 10, "the first action")
            assert app.thinking  # shown before the model has answered the rest of the turn
            await wait_until(pilot, lambda: not app.thinking, 20, "the end of the turn")
            assert "✓ describe_workflow" in screen_text(app)

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_a_draft_that_passes_mid_turn_is_not_offered_to_ctrl_r_until_the_turn_ends(make_app, chat_registry):
    """The panel never says "ctrl+r runs it" while ctrl+r would do nothing: during the turn that drafted it,
    the draft shows as passed-but-wait, ctrl+r runs nothing, and the turn's end makes it Ready."""
    server = ScriptedOpenAI([
        [call("validate_params", {"workflow": "tabular-profile",
                                  "params": {"dataset_file": "data/examples/tabular-penguins.csv"}})],
        "The draft is ready: approve it in the panel."], delay=1.5)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.query_one("#prompt", Input).value = "profile the penguins table"
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.shown_draft is not None, 10, "the draft on the panel")
            assert app.thinking
            assert text_of(app.query_one("#draft-status")) == present.draft_status("pending")
            assert app.query_one("#approve", Button).disabled
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert not app.running and not (chat_registry / "runs").exists()
            await wait_until(pilot, lambda: not app.thinking, 20, "the end of the turn")
            assert text_of(app.query_one("#draft-status")) == present.draft_status("ready")
            assert not app.query_one("#approve", Button).disabled

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_openai_backend_drafts_and_a_new_draft_replaces_the_old(make_app):
    table = "data/examples/tabular-penguins.csv"
    server = ScriptedOpenAI([
        [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": table}})],
        "The draft is ready: approve it in the panel.",
        [call("validate_params", {"workflow": "tabular-profile",
                                  "params": {"dataset_file": table, "missing_strategy": "fill_mean"}})],
        "Here is the new draft, filling missing values with the mean.",
    ])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "profile the penguins table")
            first = app.conversation.draft
            assert first is not None
            assert "✓ validate_params" in screen_text(app)
            assert not app.query_one("#approve", Button).disabled

            await say(pilot, "fill missing values with the mean instead")
            second = app.conversation.draft
            assert second.invocation_id != first.invocation_id
            assert app.shown_draft is second
            assert second.invocation_id[:12] in text_of(app.query_one("#draft-summary"))
            assert "fill_mean" in text_of(app.query_one("#draft-params"))
            # approving now approves what is on screen: the new draft, never the old one
            assert app.conversation.approve("Ada Tester").invocation_id == second.invocation_id

    try:
        asyncio.run(scenario())
    finally:
        server.stop()
    assert len(server.requests) == 4


def test_files_changed_since_approval_are_refused_not_a_traceback(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            assert app.conversation.draft is not None
            table = chat_registry / "data" / "examples" / "tabular-penguins.csv"
            table.write_text(table.read_text() + table.read_text().splitlines()[-1] + "\n")  # one more row
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: not app.running, timeout=60, what="the refusal")
            status = app.query_one("#run-status")
            assert "refused" in status.classes
            text = text_of(status)
            assert text.startswith("✗ nothing was run") and "invocation_mismatch" in text, text
            assert app.is_running
            assert not (chat_registry / "runs").exists() or not any((chat_registry / "runs").iterdir())

    asyncio.run(scenario())


def test_ctrl_q_quits_at_once_when_no_run_is_going(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

    asyncio.run(scenario())


def test_ctrl_q_quits_at_once_during_a_model_turn(make_app):
    server = ScriptedOpenAI(["never seen"], delay=30)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.query_one("#prompt", Input).value = "hello"
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(server.requests) == 1, what="the request to be sent")
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

    started = time.monotonic()
    try:
        asyncio.run(scenario())
        assert time.monotonic() - started < 10  # not the 30 s the model would take
    finally:
        server.stop()


def test_a_malformed_base_url_fails_on_the_first_send_not_at_startup(make_app):
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url="localhost:11434")  # no http://

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "hello")
            notice = text_of(app.query(".error").first())
            assert "localhost:11434" in notice and "fix the URL" in notice
            assert app.is_running

    asyncio.run(scenario())
