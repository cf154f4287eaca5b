"""Snapshots of the chat at 80x24 with syrupy and Textual's own SVG export (the Textual users get, no plugin).

Each screen is stored twice: as the SVG Textual exports (open it in a browser to look at it) and as plain
text (so a change reads as a line diff). After a deliberate change:
`python -m pytest tests/tui/test_chat_snapshots.py --snapshot-update`, and look at the new SVGs first.

Nothing on these screens depends on tmp paths, ports or the clock: the guided dialogue, a fixed terminal
size, drafts shown relative to the registry, run records with fixed ids and times, a steady cursor.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from chat_pilot import SECRET, SIZE, connected, open_history, say, screen_lines, type_secret, wait_until, write_run
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.run.runner import RunOutcome
from snakegate.tui import runinfo
from snakegate.tui.messages import RunFinished
from test_history import make_runs


# syrupy 4 reads `_file_extension` / `_write_mode`, syrupy 5 and later `file_extension` / `write_mode`:
# both are set, so the same stored files are compared under either (a fresh install gets the newest).
class SVGSnapshot(SingleFileSnapshotExtension):
    _file_extension = file_extension = "svg"
    _write_mode = write_mode = WriteMode.TEXT


class TextSnapshot(SingleFileSnapshotExtension):
    _file_extension = file_extension = "txt"
    _write_mode = write_mode = WriteMode.TEXT


@pytest.fixture
def snap(snapshot):
    """snap(app): the app's screen must equal its stored SVG and text snapshots."""

    def compare(app) -> None:
        # trailing spaces carry nothing and editors strip them; the SVG keeps the exact cells
        text = "\n".join(line.rstrip() for line in screen_lines(app).splitlines()) + "\n"
        assert text == snapshot(name="text", extension_class=TextSnapshot)
        assert app.export_screenshot() == snapshot(name="svg", extension_class=SVGSnapshot)

    return compare


def steady(app) -> None:
    """The input's cursor blinks every 0.5 s; a screenshot must not depend on when it was taken."""
    for field in app.query("Input"):
        field.cursor_blink = False


async def draft_with_a_secret(pilot) -> None:
    await connected(pilot)
    await say(pilot, "api-note")
    await type_secret(pilot, "token", SECRET)
    await say(pilot, "done")
    steady(pilot.app)
    await pilot.pause()


@pytest.fixture(autouse=True)
def fixed_secret_key(chat_registry):
    """The registry's key for sensitive values is random; a fixed one keeps the invocation id (which holds
    the token's keyed hash) the same from run to run."""
    from snakegate.provenance.secrets import key_path

    path = key_path(chat_registry)
    path.parent.mkdir(mode=0o700)
    path.write_text("5e" * 32 + "\n")
    path.chmod(0o600)


def test_main_screen_with_a_draft(snap, make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_with_a_secret(pilot)
            snap(app)

    asyncio.run(scenario())


def test_run_panel_after_a_failed_run(snap, make_app, chat_registry):
    """The panel as the app shows a failed run (a fixed record, explained by the real explain_run; the run
    itself is test_run_flow's job)."""
    app = make_app()
    run_id = "20261122T110000Z-4c0212b0"
    run_dir = write_run(chat_registry, run_id, workflow="api-note", status="failed", duration_s=3.2,
                        started="2026-11-22T11:00:00.000Z",
                        failure={"rule": "note", "exception": "ValueError", "message": "column weight is not in the "
                                 "table", "log": "logs/note.log",
                                 "log_tail": ["Traceback (most recent call last):", '  File "note.py", line 3',
                                              "ValueError: column weight is not in the table"]},
                        outputs=[{"name": "note", "path": f"runs/{run_id}/results/note.txt", "exists": False}])
    outcome = RunOutcome(run_id=run_id, run_dir=run_dir, status="failed", exit_code=1,
                         record=json.loads((run_dir / "run.json").read_text()), gate=None)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_with_a_secret(pilot)
            app.running, app.run_draft = True, app.shown_draft
            app.run_panel.started("Run · api-note " + app.shown_draft.invocation_id[:12])
            app.post_message(RunFinished(outcome, runinfo.explain(app.registry, app.settings, run_dir)))
            await wait_until(pilot, lambda: not app.running, what="the run to be shown")
            await pilot.pause()
            snap(app)

    asyncio.run(scenario())


def test_history_screen(snap, make_app, chat_registry):
    make_runs(chat_registry)
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            steady(app)
            await pilot.pause()
            snap(app)

    asyncio.run(scenario())
