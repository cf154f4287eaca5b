"""The history screen over run folders as the runner leaves them (fixed records, no Snakemake run here):
newest first, a filter, one run opened with its provenance, two runs compared, a damaged run still listed.
"""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from chat_pilot import (SECRET, SIZE, connected, history_rows, open_history, screen_lines, text_of, wait_until,
                        write_run)
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.history import DiffScreen, HistoryScreen, RunScreen
from snakegate.tui.present import MASK

OLD = "20261120T090000Z-aaaaaaaa"
FAILED = "20261121T100000Z-bbbbbbbb"
NEW = "20261122T110000Z-cccccccc"
PROV = {"entity": {
    "registry:0123abcd": {"sg:gitCommit": "0123abcd4567ef890123abcd4567ef8901234567", "sg:gitDirty": "false"},
    "wf:api-note/ff": {"sg:gitTree": "fedcba9876543210fedcba9876543210fedcba98",
                       "sg:contentHash": "ff" * 32, "sg:path": "workflows/api-note"}}}


def make_runs(root):
    write_run(root, OLD, workflow="tabular-profile", status="succeeded", started="2026-11-20T09:00:00.000Z",
              duration_s=10.6, params={"dataset_file": "data/examples/tabular-penguins.csv",
                                       "missing_strategy": "remove"})
    write_run(root, FAILED, workflow="tabular-profile", status="failed", started="2026-11-21T10:00:00.000Z",
              duration_s=3.25, failure={"rule": "clean", "exception": "KeyError", "message": "'weight'",
                                        "log_tail": ["Traceback (most recent call last):", "KeyError: 'weight'"],
                                        "log": "logs/clean.log"})
    write_run(root, NEW, workflow="api-note", status="succeeded", started="2026-11-22T11:00:00.000Z",
              duration_s=2.0, params={"token": SECRET, "label": "hello"}, prov=PROV,
              origin={"model": "guided-dialogue", "proposed_by_backend": "guided", "approved_by": "Ada Tester",
                      "approved_at": "2026-11-22T10:59:58Z", "conversation_id": "c-1"},
              outputs=[{"name": "note", "path": f"runs/{NEW}/results/note.txt", "exists": True}])


def test_history_lists_runs_newest_first_and_the_filter_narrows_them(make_app, chat_registry):
    make_runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            assert history_rows(app.screen) == [NEW, FAILED, OLD]
            shown = screen_lines(app)
            assert "2026-11-22 11:00Z" in shown and "✗ failed" in shown and "10.6 s" in shown
            await pilot.press("slash")
            await pilot.press(*"failed")
            await pilot.pause()
            assert history_rows(app.screen) == [FAILED]
            await pilot.press("escape")
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HistoryScreen)

    asyncio.run(scenario())


def test_opening_a_run_shows_masked_params_outputs_and_who_approved_it(make_app, chat_registry):
    make_runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            await pilot.press("enter")  # the newest run
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert f"token: {MASK}" in detail and SECRET not in detail and "label: hello" in detail
            assert f"note: runs/{NEW}/results/note.txt" in detail
            assert "approved by: Ada Tester at 2026-11-22T10:59:58Z" in detail
            assert "proposed by: guided-dialogue (guided)" in detail
            assert "registry commit: 0123abcd4567ef890123abcd4567ef8901234567" in detail
            assert "workflow git tree: fedcba98" in detail
            assert f"invocation: {'cccccccc' * 8}" in detail

    asyncio.run(scenario())


def test_a_failed_run_opened_from_the_history_shows_its_real_error_and_log_tail(make_app, chat_registry):
    make_runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.push_screen(RunScreen(app.registry, app.settings, FAILED))
            await wait_until(pilot, lambda: app.screen.query("#run-detail")
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert "rule: clean" in detail and "error: KeyError: 'weight'" in detail
            assert "│ Traceback (most recent call last):" in detail

    asyncio.run(scenario())


def test_two_marked_runs_are_compared_param_by_param(make_app, chat_registry):
    make_runs(chat_registry)
    write_run(chat_registry, "20261123T120000Z-dddddddd", workflow="tabular-profile", status="succeeded",
              started="2026-11-23T12:00:00.000Z", duration_s=4.0,
              params={"dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "fill_mean"})
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            await pilot.press("slash")
            await pilot.press(*"succeeded tabular")
            await pilot.press("enter")  # back to the table
            await pilot.pause()
            await pilot.press("space", "down", "space", "d")
            await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen)
                             and "comparing" not in text_of(app.screen.query_one("#diff")))
            diff = text_of(app.screen.query_one("#diff"))
            assert f"{OLD}  →  20261123T120000Z-dddddddd" in diff  # the older run first
            assert "Parameters (1 changed)" in diff
            assert "params.missing_strategy: remove → fill_mean" in diff

    asyncio.run(scenario())


def test_a_damaged_run_folder_is_listed_and_does_not_break_the_history(make_app, chat_registry):
    make_runs(chat_registry)
    broken = chat_registry / "runs" / "20261124T000000Z-eeeeeeee"
    broken.mkdir()
    (broken / "run.json").write_text("{ not json")
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            assert broken.name in history_rows(app.screen) and NEW in history_rows(app.screen)
            app.screen.query_one("#runs", DataTable).move_cursor(row=history_rows(app.screen).index(broken.name))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            assert app.is_running

    asyncio.run(scenario())
