"""A plan on the draft panel: its steps and the edges between them read at 80x24, each step's params below
(sensitive ones masked), and ctrl+r runs the whole plan once, through the same approval as one workflow.

Textual's pilot drives the real app; the guided dialogue, the controller, the plan gate and Snakemake are
the real ones; the model test uses the scripted OpenAI-compatible server through the real OpenAIBackend.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from chat_pilot import SIZE, approve_and_wait, connected, say, screen_lines, text_of, wait_until
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from plan_registry import BENCH, CLEAN, SIZE_COLUMNS, make_plan_registry
from registry_copies import LABEL_PARAM, TOKEN_PARAM, note_workflow
from snakegate.commands.chat_cmds import build_app
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.tui import present

API_NOTE = note_workflow("api-note", "API note", "Writes a note with an API token.",
                         {"token": TOKEN_PARAM, "label": LABEL_PARAM})
SECRET = "tok-5e4d3c2b1a09"


@pytest.fixture
def plan_registry(tmp_path):
    return make_plan_registry(tmp_path / "registry", {"api-note": API_NOTE}, with_git=True)


def app_for(root, **backend):
    return build_app(lambda: Registry.load(root), load_settings(root), guided=not backend, approved_by="Ada Tester",
                     conversation_id="c-tui-plan", **backend)


def test_a_guided_plan_shows_steps_and_edges_at_80x24_and_ctrl_r_runs_it_once(plan_registry):
    asyncio.run(_guided_plan_runs(plan_registry))


async def _guided_plan_runs(plan_registry):
    app = app_for(plan_registry)
    async with app.run_test(size=SIZE) as pilot:
        await connected(pilot)
        await say(pilot, "profile data/examples/tabular-penguins.csv, then benchmark a classifier on the cleaned "
                         "result")
        await say(pilot, ", ".join(SIZE_COLUMNS))
        await say(pilot, "sex")
        await say(pilot, "skip")  # feature_columns: every column but the label
        await wait_until(pilot, lambda: app.shown_draft is not None and app.shown_draft.plan is not None,
                         what="the plan's draft")
        screen = screen_lines(app)
        # the panel's first lines, in view without scrolling: the steps, the edge and the approve key
        for line in ("plan · 2 steps", "profile: tabular-profile", "benchmark: classifier-benchmark",
                     "dataset ← profile.cleaned", "Approve and run (ctrl+r)", "● Ready"):
            assert line in screen, screen
        rows = [" ".join(line.split()) for line in text_of(app.query_one("#draft-params")).splitlines()]
        assert "benchmark: classifier-benchmark 1.0.0" in rows and "label_column sex" in rows
        assert "dataset ← profile.cleaned" in rows and "dataset_file data/examples/tabular-penguins.csv" in rows

        status = await approve_and_wait(pilot, timeout=600)
        assert status.startswith("✓ succeeded"), status
        run_id = status.splitlines()[1].removeprefix("run ")
        record = json.loads((plan_registry / "runs" / run_id / "run.json").read_text())
        assert record["kind"] == "plan" and record["plan"]["steps"] == {"profile": "tabular-profile",
                                                                        "benchmark": "classifier-benchmark"}
        assert record["origin"]["approved_by"] == "Ada Tester"
        assert text_of(app.query_one("#draft-status")).startswith("◆ Used")  # one approval, one run


def test_a_model_proposed_plan_is_shown_with_its_sensitive_value_masked(plan_registry):
    asyncio.run(_model_plan_masked(plan_registry))


async def _model_plan_masked(plan_registry):
    note = {"name": "note", "workflow": "api-note", "params": {"token": "<redacted>", "label": "hi"}}
    server = ScriptedOpenAI([[call("describe_workflow", {"workflow": "api-note"})], "Type the token in its field.",
                             [call("propose_plan", {"label": "sized", "steps": [CLEAN, BENCH, note]})],
                             "The plan is ready to approve."])
    base_url = server.start()
    try:
        app = app_for(plan_registry, model=DEFAULT_MODEL, base_url=base_url)
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "write an api note too")
            field = app.query_one("#secret-token")
            field.value = SECRET
            field.focus()
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.thinking, what="the note that the token was entered")
            await say(pilot, "now the plan")
            await wait_until(pilot, lambda: app.shown_draft is not None, what="the plan's draft")
            screen = screen_lines(app)
            assert "plan sized · 3 steps" in screen and "bench: classifier-benchmark" in screen
            assert "dataset ← clean.cleaned" in screen and "note: api-note" in screen
            params = text_of(app.query_one("#draft-params"))
            assert present.MASK in params and SECRET not in params and SECRET not in screen
            assert SECRET in app.shown_draft.config_path.read_text()  # the draft holds it for Snakemake
            assert all(SECRET not in body for body in server.raw_bodies)  # the model never saw it
    finally:
        server.stop()
