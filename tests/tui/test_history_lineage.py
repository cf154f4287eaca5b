"""The chat's history shows what each run was made from, as `snakegate runs` does (one reading,
snakegate.views.lineage): a fork or a rerun has a second line naming its parent, the highlighted run's whole
lineage (the params a fork changed, by name) is under the table, and a run opened from the history names its
parent with each changed value as its params show it (a sensitive one masked). Run folders written with fixed
times; no run."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from chat_pilot import SECRET, SIZE, open_history, screen_lines, text_of, wait_until, write_run
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.history import RunScreen
from snakegate.tui.present import MASK

PARENT, FORK, RERUN, NOTE, NOTE_FORK = ("20261120T090000Z-aaaaaaaa", "20261121T090000Z-bbbbbbbb",
                                        "20261122T090000Z-cccccccc", "20261123T090000Z-dddddddd",
                                        "20261124T090000Z-eeeeeeee")
PENGUINS = {"dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "remove"}


def _runs(root):
    write_run(root, PARENT, workflow="tabular-profile", status="succeeded", started="2026-11-20T09:00:00Z",
              duration_s=3.0, params=PENGUINS)
    write_run(root, FORK, workflow="tabular-profile", status="succeeded", started="2026-11-21T09:00:00Z",
              duration_s=2.0, params={**PENGUINS, "missing_strategy": "fill_median"}, parent_run=PARENT,
              fork_changes={"missing_strategy": "fill_median"})
    write_run(root, RERUN, workflow="tabular-profile", status="succeeded", started="2026-11-22T09:00:00Z",
              duration_s=3.0, params=PENGUINS, rerun_of=PARENT)
    write_run(root, NOTE, workflow="api-note", status="succeeded", started="2026-11-23T09:00:00Z",
              duration_s=1.0, params={"token": "tok-old-value", "label": "hello"})
    write_run(root, NOTE_FORK, workflow="api-note", status="succeeded", started="2026-11-24T09:00:00Z",
              duration_s=1.0, params={"token": SECRET, "label": "hello"}, parent_run=NOTE,
              fork_changes={"token": SECRET})


def _highlight(app, run_id: str) -> None:
    table = app.screen.query_one("#runs", DataTable)
    table.move_cursor(row=table.get_row_index(run_id))


def test_history_names_the_parent_of_a_fork_and_of_a_rerun_under_its_workflow(make_app, chat_registry):
    _runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            shown = screen_lines(app)
            assert "fork of aaaaaaaa" in shown and "rerun of aaaaaaaa" in shown and "fork of dddddddd" in shown
            assert all(len(line.rstrip()) <= 80 for line in shown.splitlines())

    asyncio.run(scenario())


def test_the_highlighted_fork_shows_its_parent_and_changed_params_under_the_table(make_app, chat_registry):
    _runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            hint = app.screen.query_one("#history-hint")
            _highlight(app, FORK)
            await pilot.pause()
            assert text_of(hint).startswith(f"fork of {PARENT} (changed missing_strategy)")
            _highlight(app, PARENT)  # a run made from none: only the keys
            await pilot.pause()
            assert not text_of(hint).startswith(("fork", "rerun"))
            _highlight(app, NOTE_FORK)
            await pilot.pause()
            assert text_of(hint).startswith(f"fork of {NOTE} (changed token)") and SECRET not in text_of(hint)

    asyncio.run(scenario())


def test_a_fork_opened_from_the_history_names_its_parent_and_masks_a_changed_secret(make_app, chat_registry):
    _runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            _highlight(app, NOTE_FORK)
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen)
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert f"fork of: {NOTE} (token={MASK})" in detail and SECRET not in detail

    asyncio.run(scenario())
