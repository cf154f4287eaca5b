"""run.json's `progress` at a run's end (snakegate.run.record.progress): the last `N of M steps` line of Snakemake's
log, found without splitting a 10,000-job log into its lines beside the DAG (issue 30: memory at 10,000 jobs)."""

from __future__ import annotations

import tracemalloc

from snakegate.run.record import progress


def _log(jobs: int) -> str:
    lines = []
    for i in range(1, jobs + 1):
        lines += ["[Thu Jan  1 00:00:00 2026]", "localrule wf_part:", f"    output: runs/r/results/parts/{i}.txt",
                  f"    jobid: {i}", "[Thu Jan  1 00:00:01 2026]", f"Finished jobid: {i} (Rule: wf_part)",
                  f"{i} of {jobs} steps ({100 * i // jobs}%) done"]
    return "\n".join(lines) + "\n"


def test_the_last_progress_line_is_the_runs_progress():
    assert progress(_log(30)) == {"done": 30, "total": 30}
    assert progress("1 of 4 steps (25%) done\n  2 of 4 steps (50%) done\r\nlater output\n") == {"done": 2, "total": 4}


def test_a_log_without_progress_says_nothing_was_done():
    assert progress("") == {"done": 0, "total": None}
    assert progress("Building DAG of jobs...\nnot 3 of 4 steps (75%) done\n") == {"done": 0, "total": None}


def test_a_progress_line_after_a_lone_carriage_return_counts():
    assert progress("1 of 2 steps (50%) done\r2 of 2 steps (100%) done") == {"done": 2, "total": 2}


def test_reading_a_big_log_holds_nothing_like_its_lines():
    text = _log(10_000)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        assert progress(text) == {"done": 10_000, "total": 10_000}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - before < len(text) / 10, f"{peak - before:,} bytes held for a {len(text):,}-character log"
