"""A bounded refinement in the chat app (issue 25.3), at 80x24 with the real guided dialogue, gate and Snakemake:
one sentence proposes it, the panel shows the whole space, ctrl+r approves it once, each point runs in the
run worker with its progress, and the table of variants with their verdicts enters the conversation;
ctrl+c cancels the running variant and starts no other.

The pump-probe scenario (tests/refine_registry.py): the parent's background ROI sits on the signal's wing.
"""

from __future__ import annotations

import asyncio

import pytest
from chat_pilot import SIZE, connected, say, screen_lines, text_of, wait_until
from refine_registry import (
    CLEAR,
    STILL_ON_IT,
    contaminated,
    refinement_records,
    roi_of,
    run_json,
    run_names,
)

from snakegate.commands.chat_cmds import build_app
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


@pytest.fixture(scope="module")
def pp(tmp_path_factory):
    return contaminated(tmp_path_factory)


def chat_app(root, conversation_id: str):
    return build_app(lambda: Registry.load(root), load_settings(root), guided=True, model=None, base_url=None,
                     approved_by="Ada Tester", conversation_id=conversation_id)


def test_a_guided_refinement_is_approved_once_on_the_panel_and_stops_at_the_first_clean_verdict(pp):
    root, parent = pp
    before, known = run_names(root), len(refinement_records(root))
    app = chat_app(root, "c-tui-refine")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, f"try background_roi {STILL_ON_IT} then {CLEAR} on {parent} "
                             "until the background is clean", timeout=180)
            assert app.shown_refinement is not None, screen_lines(app)
            panel = " ".join(text_of(app.query_one("#draft-params")).split())  # as wrapped in the panel
            assert "1. background_roi=[17, 25, 8, 24]" in panel and "2. background_roi=[20, 28, 8, 24]" in panel
            assert "Move background_roi away from the signal" in panel  # the check's advice
            assert "background_uniform" in text_of(app.query_one("#draft-summary"))
            shown = screen_lines(app)  # 80x24: the state and the key in view
            assert "● Ready" in shown and "ctrl+r" in shown
            said = app.query(".assistant").last().source
            assert "I read “the background is clean” as the check `background_uniform`" in said

            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.running, 30, "the refinement to start")
            await wait_until(pilot, lambda: "point" in text_of(app.query_one("#run-title")), 120, "the first point")
            await wait_until(pilot, lambda: not app.running, 600, "the refinement to end")
            status = text_of(app.query_one("#run-status"))
            assert ": reached · run " in status and "passes background_uniform" in status, status
            table = app.query(".result").last().source  # the table of variants with their verdicts, in the chat
            assert "[17, 25, 8, 24]" in table and "[20, 28, 8, 24]" in table and "pass (" in table
            assert "◆ Ran · refinement reached" in text_of(app.query_one("#draft-status"))
            await pilot.press("ctrl+r")  # one approval, one loop: nothing is approvable now
            await pilot.pause(0.5)
            assert not app.running

    asyncio.run(scenario())
    new = run_names(root) - before
    assert sorted(roi_of(root, name) for name in new) == sorted([STILL_ON_IT, CLEAR])
    (record,) = refinement_records(root)[known:]
    assert record["state"] == "reached" and record["approved_by"] == "Ada Tester"
    assert all(run_json(root, name)["origin"]["conversation_id"] == "c-tui-refine" for name in new)


def test_ctrl_c_cancels_the_running_variant_and_starts_no_other(pp):
    root, parent = pp
    before, known = run_names(root), len(refinement_records(root))
    app = chat_app(root, "c-tui-refine-cancel")

    def delay_curve_started() -> bool:
        for name in run_names(root) - before:
            stderr = root / "runs" / name / "stderr"
            if stderr.is_dir() and any(p.name.startswith("delay_curve") for p in stderr.iterdir()):
                return True
        return False

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            # a long bootstrap in every point (minutes): the cancel arrives while the first one's job runs
            await say(pilot, f"try n_bootstrap 100000 then 90000 on {parent} until background_uniform", timeout=180)
            assert app.shown_refinement is not None, screen_lines(app)
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: app.running, 30, "the refinement to start")
            await wait_until(pilot, lambda: "point 1/2" in text_of(app.query_one("#run-title")), 120, "point 1")
            assert "ctrl+c cancels this point; no other starts" in text_of(app.query_one("#run-status"))
            await wait_until(pilot, delay_curve_started, 300, "the first point's delay_curve job")
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: not app.running, 120, "the refinement to stop")
            assert ": cancelled · run " in text_of(app.query_one("#run-status"))
            assert app.is_running  # ctrl+c stopped the refinement, not the app

    asyncio.run(scenario())
    (name,) = run_names(root) - before  # no second variant started
    assert run_json(root, name)["status"] == "cancelled"
    (record,) = refinement_records(root)[known:]
    assert record["state"] == "cancelled" and [r["run_id"] for r in record["runs"]] == [name]
