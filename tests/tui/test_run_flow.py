"""Whole runs from the chat, with the real guided dialogue, gate and Snakemake, at 80x24: a run that succeeds
and is recorded with its origin, then found in the history; a run cancelled with a key; a run that fails
with its real error in the panel and in the history.
"""

from __future__ import annotations

import asyncio
import json

from chat_pilot import (SIZE, approve_and_wait, assert_only_downstream_reran, connected, draft_penguins,
                        history_rows, open_history, run_fork_and_diff, say,
                        screen_lines, text_of, wait_until)
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.history import RunScreen


def test_a_guided_run_succeeds_with_a_summary_and_shows_in_the_history(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            status = await approve_and_wait(pilot)
            assert status.startswith("✓ succeeded"), status
            run_id = status.splitlines()[1].removeprefix("run ")
            shown = screen_lines(app)  # 80x24: the draft's state, the key and the outcome without scrolling
            assert "Used" in shown and "ctrl+r" in shown and "✓ succeeded" in shown and run_id in shown
            summary = app.query(".result").last().source  # the result summary in the chat (Markdown)
            assert f"Run {run_id} succeeded" in summary
            assert "rows_kept = " in summary and "✓" in summary and "rows_in = " in summary  # the check first
            assert f"runs/{run_id}/results/profile.png" in summary

            await open_history(pilot)
            assert history_rows(app.screen)[0] == run_id
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert "approved by: Ada Tester" in detail and "proposed by: guided-dialogue (guided)" in detail
            assert "registry commit: " in detail and "dataset_file: " in detail
            assert "Key numbers" in detail and "rows_in = " in detail
            return run_id

    run_id = asyncio.run(scenario())
    record = json.loads((chat_registry / "runs" / run_id / "run.json").read_text())
    assert record["status"] == "succeeded"
    assert record["origin"]["approved_by"] == "Ada Tester" and record["origin"]["conversation_id"] == "c-tui-test"


def test_fork_from_the_history_reruns_only_downstream_jobs_and_the_diff_shows_the_one_param(make_app,
                                                                                            chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            return await run_fork_and_diff(pilot)

    assert_only_downstream_reran(chat_registry, *asyncio.run(scenario()))


def test_ctrl_c_during_a_run_cancels_it_and_it_is_recorded_cancelled(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "slow-note")
            await say(pilot, "done")
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.running, 30, "the run to start")
            runs = chat_registry / "runs"
            await wait_until(pilot, lambda: runs.is_dir() and any(
                json.loads((d / "run.json").read_text()).get("snakemake_pid") for d in runs.iterdir()
                if (d / "run.json").is_file()), 60, "Snakemake to start")
            await wait_until(pilot, lambda: "step" in text_of(app.query_one("#run-status")), 60, "progress")
            shown = screen_lines(app)  # 80x24: the draft's state, the run's progress and the cancel key at once
            assert "▶ Running" in shown and "step" in shown and "ctrl+c cancels the run" in shown
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: not app.running, 60, "the run to stop")
            status = text_of(app.query_one("#run-status"))
            assert status.startswith("■ cancelled"), status
            assert "cancelled by SIGINT" in status
            assert app.is_running  # ctrl+c stopped the run, not the app

    asyncio.run(scenario())
    (run_dir,) = (chat_registry / "runs").iterdir()
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "cancelled" and record["cancelled_by"] == "SIGINT"
    assert not (run_dir / "results" / "note.txt").exists()


def test_a_failed_run_shows_its_real_error_in_the_panel_and_the_history(make_app, chat_registry):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "broken-note")
            await say(pilot, "done")
            status = await approve_and_wait(pilot, timeout=120)
            assert status.startswith("✗ failed"), status
            assert "failed rule: note" in status
            # what the job said (put together at run time, so it is in no file Snakemake read), not its exit code
            assert "ValueError: column weight is missing" in status
            await open_history(pilot)
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert "rule: note" in detail and "ValueError: column weight is missing" in detail

    asyncio.run(scenario())
