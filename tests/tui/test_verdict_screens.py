"""Issue 25 §1 and issue 29 §2 in the chat: a run's verdict in the run panel, the chat's summary after a run, the
history's rows, a run opened from the history and the diff of two runs; after a run and after a fork the key
numbers are the verdict's checks first, then what changed against the parent.

Real runs of the tiny `scored` workflow (tests/verdict_view_runs.py) read through the chat's own readers
(runinfo: the real explain_run) and, for the history, the real app driven by Textual's pilot at 80x24.
"""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, open_history, text_of, wait_until
from verdict_view_runs import record_of  # the runs themselves: session fixtures in conftest.py
from snakegate.commands.chat_cmds import build_app
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.tui import present_runs, runinfo
from snakegate.tui.history import RunScreen


def facts_of(root, run_dir):
    return runinfo.run_facts(Registry.load(root), load_settings(root), run_dir)


def test_the_run_panel_names_the_verdict_the_failing_check_and_the_params_to_look_at(judged_registry, failing_run):
    facts = facts_of(judged_registry, failing_run)
    lines = present_runs.outcome_lines("succeeded", failing_run.name, facts.record, facts.explained, failing_run,
                                       judged_registry)
    assert lines[2:5] == ["verdict ✗ fail: 1 of 3 checks failed (score)",
                          "  score: /score = 0.3, needs >= 0.4 (param floor)", "  look at: score"]


def test_after_a_fork_the_chat_shows_the_verdict_then_the_checks_then_what_changed(judged_registry, forked_run):
    facts = facts_of(judged_registry, forked_run)
    text = present_runs.result_summary("succeeded", forked_run.name, facts.record, facts.explained, forked_run,
                                       judged_registry)
    lines = text.splitlines()
    assert lines[1] == "Verdict: **fail** — 1 of 3 checks failed (score)."
    assert lines[2] == ("`score`: /score = 0.2, needs >= 0.5 (param floor). The score is below the floor; raise score. "
                        "Look at `score`.")
    # the failing check first, with what its value was in the parent run; then the passing ones
    assert lines[3] == "Key numbers: `score = 0.2 ✗ (was 0.75)`, `values_mean = 2 ✓`, `summarized = 3 ✓`"


def test_explain_run_gives_a_fork_the_numbers_that_changed_against_its_parent(judged_registry, forked_run,
                                                                                passing_run):
    explained = facts_of(judged_registry, forked_run).explained
    assert explained["fork_of"] == passing_run.name
    assert explained["changed_from_parent"] == [{"output": "metrics", "key": "score", "parent": 0.75, "value": 0.2}]


def test_a_history_row_shows_the_verdict_beside_the_status_and_the_filter_finds_it(failing_run, passing_run):
    failing, passing = record_of(failing_run), record_of(passing_run)
    assert present_runs.history_row(failing)[2] == "✓ succeeded · ✗ fail"
    assert present_runs.history_row(passing)[2] == "✓ succeeded · ✓ pass"
    assert present_runs.matches(failing, "scored fail") and not present_runs.matches(passing, "scored fail")


def test_a_refinement_run_opened_from_the_history_says_so_and_shows_its_checks(judged_registry, refined_run):
    lines = present_runs.detail_lines(facts_of(judged_registry, refined_run))
    refinement = record_of(refined_run)["refinement"]["id"]
    assert f"part of: refinement {refinement}, point 1 of 1" in lines
    at = lines.index("Verdict: pass — all 3 checks passed")
    assert lines[at + 1:at + 4] == ["  ✓ score: /score = 0.6, needs >= 0.4 (param floor)",
                                    "  ✓ values_mean: mean(v) = 2, needs >= 1.5",
                                    "  ✓ summarized: /count = 3, needs >= 1"]


def test_the_diff_screen_ends_with_each_check_a_to_b(judged_registry, passing_run, forked_run):
    diff = runinfo.diff(Registry.load(judged_registry), judged_registry, passing_run, forked_run)
    lines = present_runs.diff_lines(diff)
    assert lines[-2:] == ["verdict: pass → fail (1 of 3 checks changed):",
                          "  score: pass → fail (0.75 → 0.2, needs >= 0.5 (param floor))"]


def test_the_history_marks_a_failing_verdict_and_opens_the_run_with_its_checks(judged_registry, failing_run):
    from textual.widgets import DataTable

    app = build_app(lambda: Registry.load(judged_registry), load_settings(judged_registry), guided=True,
                    approved_by="Ada Tester", conversation_id="c-verdict")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await open_history(pilot)
            assert str(app.screen.query_one("#runs", DataTable).get_row(failing_run.name)[3]) == \
                "✓ succeeded · ✗ fail"
            app.push_screen(RunScreen(app.registry, app.settings, failing_run.name))
            await wait_until(pilot, lambda: app.screen.query("#run-detail")
                             and "reading" not in text_of(app.screen.query_one("#run-detail")))
            detail = text_of(app.screen.query_one("#run-detail"))
            assert "Verdict: fail — 1 of 3 checks failed (score)" in detail
            assert "✗ score: /score = 0.3, needs >= 0.4 (param floor)" in detail
            assert "look at: score" in detail and "The score is below the floor; raise score." in detail
            assert "score = 0.3 ✗" in detail  # the key numbers start with the checks

    asyncio.run(scenario())
