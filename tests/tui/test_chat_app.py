"""The chat app driven through Textual's pilot: the guided dialogue, drafts, approval, runs, failures.

Only `test_guided_dialogue_drafts_approves_and_runs_with_origin_recorded` runs Snakemake; the others stop
at the draft or are refused before anything runs.
"""

from __future__ import annotations

import asyncio
import json

from textual.widgets import Button, Input

from chat_pilot import SECRET, SIZE, say, screen_text, text_of, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from snakegate.tui.present import GUIDED_LABEL, MASK


def test_opening_screen_greets_and_approve_is_disabled_before_a_draft(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert "offline guided dialogue" in screen_text(app)
            assert app.sub_title == GUIDED_LABEL
            assert app.query_one("#approve", Button).disabled
            assert app.focused is app.query_one("#prompt", Input)
            await pilot.press("ctrl+r")  # the key does nothing without a draft
            await pilot.pause()
            assert app.conversation.draft is None and not app.running
            assert not (chat_registry / "runs").exists()

    asyncio.run(scenario())


def test_guided_dialogue_drafts_approves_and_runs_with_origin_recorded(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await say(pilot, "profile a csv table")
            assert "dataset_file" in screen_text(app)
            assert app.query_one("#approve", Button).disabled  # still no draft
            await say(pilot, "data/examples/tabular-penguins.csv")
            await say(pilot, "done")

            draft = app.conversation.draft
            assert draft is not None and draft.workflow == "tabular-profile"
            summary = text_of(app.query_one("#draft-summary"))
            assert "tabular-profile 1.0.0" in summary and draft.invocation_id[:12] in summary
            assert "data/examples/tabular-penguins.csv" in text_of(app.query_one("#draft-params"))
            config = text_of(app.query_one("#draft-config"))
            assert f"drafts/{draft.config_path.name}" in config and "snakemake --configfile" in config
            assert not app.query_one("#approve", Button).disabled

            await pilot.click("#approve")
            await pilot.pause()
            assert app.running
            assert app.query_one("#approve", Button).disabled  # no second approval while the run goes

            await pilot.press("ctrl+q")  # a run is going: the first ctrl+q only warns
            await pilot.pause()
            assert app.is_running and app.quit_armed

            await wait_until(pilot, lambda: not app.running, timeout=300, what="the run to finish")
            status = text_of(app.query_one("#run-status"))
            assert status.startswith("succeeded"), status
            run_id = status.split("run ", 1)[1].split(" ", 1)[0]
            assert f"snakegate prov {run_id}" in status
            assert f"runs/{run_id}/results/" in status
            assert not app.query_one("#approve", Button).disabled  # the draft may be approved (and run) again
            assert not app.quit_armed
            return run_id

    run_id = asyncio.run(scenario())
    record = json.loads((chat_registry / "runs" / run_id / "run.json").read_text())
    assert record["status"] == "succeeded"
    origin = record["origin"]
    assert origin["approved_by"] == "Ada Tester"
    assert origin["proposed_by_backend"] == "guided" and origin["model"] == "guided-dialogue"
    assert origin["conversation_id"] == "c-tui-test"


def test_sensitive_values_are_masked_in_the_panel_and_the_transcript(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await say(pilot, "api note")
            await say(pilot, SECRET)
            await say(pilot, "done")
            draft = app.conversation.draft
            assert draft is not None and draft.params["token"] == SECRET  # the real value stays in the draft
            params = text_of(app.query_one("#draft-params"))
            assert MASK in params and SECRET not in params
            assert "note" in params  # the non-sensitive label is shown as is
            assert SECRET not in screen_text(app)  # nor where the researcher typed it

    asyncio.run(scenario())


def test_backend_failure_is_shown_and_the_chat_keeps_working(make_app):
    server = ScriptedOpenAI(["Hello from the model."])
    base_url = server.bind()  # the port is reserved but refuses connections until start()
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=base_url)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            assert app.sub_title == f"{DEFAULT_MODEL} @ {base_url}"
            await say(pilot, "hello")
            errors = app.query(".error")
            assert len(errors) == 1
            notice = text_of(errors.first())
            assert "cannot reach" in notice and base_url in notice and "send again" in notice
            assert not app.query_one("#prompt", Input).disabled  # ready for another try

            server.start()
            await say(pilot, "hello again")
            assert "Hello from the model." in screen_text(app)
            assert len(app.query(".error")) == 1

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
    base_url = server.start()
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=base_url)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
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
            await say(pilot, "profile a csv table")
            await say(pilot, "data/examples/tabular-penguins.csv")
            await say(pilot, "done")
            assert app.conversation.draft is not None
            table = chat_registry / "data" / "examples" / "tabular-penguins.csv"
            table.write_text(table.read_text() + table.read_text().splitlines()[-1] + "\n")  # one more row
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: not app.running, timeout=60, what="the refusal")
            status = app.query_one("#run-status")
            assert "refused" in status.classes
            text = text_of(status)
            assert text.startswith("nothing was run") and "invocation_mismatch" in text, text
            assert app.is_running
            assert not (chat_registry / "runs").exists() or not any((chat_registry / "runs").iterdir())

    asyncio.run(scenario())


def test_ctrl_q_quits_at_once_when_no_run_is_going(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

    asyncio.run(scenario())


def test_a_malformed_base_url_fails_on_the_first_send_not_at_startup(make_app):
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url="localhost:11434")  # no http://

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await say(pilot, "hello")
            notice = text_of(app.query(".error").first())
            assert "localhost:11434" in notice and "fix the URL" in notice
            assert app.is_running

    asyncio.run(scenario())
