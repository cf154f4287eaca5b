"""The chat's history reads a plan's run as a plan: listed with its step count and found by a step's workflow,
opened with its steps, the edges between them and each step's params (a sensitive one masked), and compared
with its fork step by step. Textual's pilot at 80x24 on the session's real plan runs (tests/plan_runs.py).
"""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, connected, history_rows, open_history, text_of, wait_until
from plan_runs import PLAN_LABEL, PLAN_SECRET
from snakegate.commands.chat_cmds import build_app
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.tui.history import DiffScreen, RunScreen
from snakegate.tui.present import MASK


def _app(root):
    return build_app(lambda: Registry.load(root), load_settings(root), guided=True, model=None, base_url=None,
                     approved_by="Ada Tester", conversation_id="c-tui-plan")


def _row(screen, run_id: str) -> list[str]:
    from textual.widgets import DataTable

    table = screen.query_one("#runs", DataTable)
    return [str(c) for c in table.get_row(run_id)]


def test_the_history_lists_a_plan_with_its_step_count_and_finds_it_by_a_steps_workflow(plan_registry, plan_run):
    app = _app(plan_registry)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            assert _row(app.screen, plan_run.name)[2] == f"plan {PLAN_LABEL} (3 steps)"
            await pilot.press("slash")
            await pilot.press(*"classifier-benchmark")
            await pilot.pause()
            assert plan_run.name in history_rows(app.screen)

    asyncio.run(scenario())


def test_a_plan_run_opened_from_the_history_shows_its_steps_edges_and_params_by_step(plan_registry, plan_run):
    app = _app(plan_registry)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.push_screen(RunScreen(app.registry, app.settings, plan_run.name))
            await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query("#run-detail")
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert "cannot be read" not in detail
            assert "Steps\n  clean: tabular-profile 1.0.0\n  bench: classifier-benchmark 1.0.0\n" \
                   "  note: secret-note 0.1.0" in detail
            assert "Edges\n  bench.dataset ← clean.cleaned" in detail
            assert "  bench.dataset: ← clean.cleaned" in detail and "  bench.label_column: sex" in detail
            assert f"  note.token: {MASK}" in detail and PLAN_SECRET not in detail
            assert "accuracy = " in detail  # the key numbers of bench's metrics, through explain_run

    asyncio.run(scenario())


def test_the_history_compares_a_plan_and_its_fork_by_step(plan_registry, plan_run, plan_fork_run):
    app = _app(plan_registry)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.push_screen(DiffScreen(app.registry, app.settings, plan_run.name, plan_fork_run.name))
            await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.query("#diff")
                             and "comparing" not in text_of(app.screen.query_one("#diff")))
            diff = text_of(app.screen.query_one("#diff"))
            assert "Parameters (1 changed)" in diff
            assert "steps.bench.params.model: logistic_regression → random_forest" in diff
            assert "bench.metrics: differs" in diff and PLAN_SECRET not in diff

    asyncio.run(scenario())
