"""The newcomer's journey, end to end in the chat at 80x24 with the guided dialogue (no model): profile the
penguins table with median fill, then benchmark a classifier predicting species on the cleaned table (a
plan), fix a refused answer with `yes`, approve and run, read the results in the chat, fork with one change
and run the fork.

Textual's pilot; the real conversation, gate, plan runner and Snakemake in a throw-away registry: slow.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chat_pilot import SIZE, approve_and_wait, assistant_texts, connected, say, screen_lines, text_of, wait_until
from plan_registry import PENGUINS, make_plan_registry
from snakegate.commands.chat_cmds import build_app
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

REQUEST = ("profile my penguins table with median fill, "
           "then benchmark a classifier predicting species on the cleaned table")
MEASURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


@pytest.fixture
def registry(tmp_path) -> Path:
    return make_plan_registry(tmp_path / "registry", with_git=True)


async def summary_of_run(pilot, run_id: str) -> str:
    """Wait for the guided dialogue's reading of `run_id` (a turn of its own after the run); return it."""
    app = pilot.app
    await wait_until(pilot, lambda: not app.thinking and any(f"Run `{run_id}`" in t for t in assistant_texts(app)),
                     60, f"the chat's summary of {run_id}")
    return next(t for t in reversed(assistant_texts(app)) if f"Run `{run_id}`" in t)


def test_the_newcomers_journey_from_request_to_a_fork_in_the_chat(registry):
    settings = load_settings(registry)
    app = build_app(lambda: Registry.load(registry), settings, guided=True, model=None, base_url=None,
                    approved_by="Ada Tester", conversation_id="c-journey")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            # one sentence: the chain, the table by its name, the fill and the label read from it
            await say(pilot, REQUEST)
            asking = text_of(app.query_one("#asking"))
            assert "`columns` (step profile (tabular-profile))" in asking
            assert f"dataset_file = {PENGUINS}" in asking and "missing_strategy = fill_median" in asking

            # a refused answer, fixed with `yes`
            await say(pilot, "species, bill_length, " + ", ".join(MEASURES[1:]))
            assert "`bill_length` is not a column of the table; did you mean `bill_length_mm`?" \
                in assistant_texts(app)[-1]
            await say(pilot, "yes")
            assert "From your request: `label_column` = `species`." in assistant_texts(app)[-1]
            await say(pilot, "skip")  # feature_columns: every column but the label
            draft = app.conversation.draft
            assert draft is not None and draft.plan is not None
            clean, bench = draft.plan.steps
            assert clean.params["columns"] == ["species", *MEASURES]
            assert clean.params["missing_strategy"] == "fill_median" and clean.params["dataset_file"] == PENGUINS
            assert bench.params["label_column"] == "species"
            assert "approver: Ada Tester" in screen_lines(app)

            # approve and run; the chat reads the results back
            status = await approve_and_wait(pilot, timeout=600)
            assert status.startswith("✓ succeeded"), status
            run_id = status.splitlines()[1].removeprefix("run ")
            summary = await summary_of_run(pilot, run_id)
            assert "succeeded" in summary and "Verdict:" in summary
            record = json.loads((registry / "runs" / run_id / "run.json").read_text())
            assert record["kind"] == "plan" and record["origin"]["approved_by"] == "Ada Tester"

            # fork with one change, approve, run: only the benchmark re-runs
            await say(pilot, f"fork {run_id} benchmark.model=random_forest")
            fork_draft = app.conversation.draft
            assert fork_draft is not None and fork_draft.invocation_id != draft.invocation_id, \
                assistant_texts(app)[-1]
            status = await approve_and_wait(pilot, timeout=600)
            assert status.startswith("✓ succeeded"), status
            fork_id = status.splitlines()[1].removeprefix("run ")
            fork_summary = await summary_of_run(pilot, fork_id)
            assert f"A fork of `{run_id}` with `benchmark.model` = `random_forest`" in fork_summary
            fork_record = json.loads((registry / "runs" / fork_id / "run.json").read_text())
            assert fork_record["fork_changes"] == {"benchmark.model": "random_forest"}

            await say(pilot, "approve")  # the fork ran: nothing is ready until a new draft passes
            assert "The draft ran already" in assistant_texts(app)[-1]

    asyncio.run(scenario())
