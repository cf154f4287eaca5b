"""`snakegate run` read at 80 columns (issue 29 §3): while it runs, each rule once with the job it is of the
run's jobs (never a bare `[4/5]`, never the target rule); when it ends, one summary line that fits, then the
outputs one per line and the provenance record.

One real run of tabular-profile's example (tests/commands/cli_runs.py: the console command in a fresh
process, COLUMNS=80), shared; the printer alone reads Snakemake's own log lines through the runner's parser.
"""

from __future__ import annotations

import io
import json
import re

from cli_runs import profiled  # noqa: F401 - the shared run
from snakegate.commands.run_cmds import ProgressPrinter
from snakegate.run.runner import Progress

COUNTED = re.compile(r"^  \[\d+/\d+\] \S+$")


def test_run_progress_names_each_rule_once_and_no_bare_count(profiled):
    proc, run_dir = profiled
    progress = [line for line in proc.stderr.splitlines() if line.startswith("  [")]
    rules = [line.split("] ", 1)[1] for line in progress]
    executed = json.loads((run_dir / "run.json").read_text())["jobs_executed"]
    assert len(rules) == len(set(rules)) and set(rules) == set(executed), proc.stderr
    assert all(COUNTED.match(line) for line in progress[1:]), progress  # `[k/n] rule`, never `[k/n]` alone
    assert "snakegate_all" not in proc.stderr
    last = progress[-1].split("]")[0].strip(" [")
    assert last.split("/")[0] == last.split("/")[1]  # the last rule is the last job of the run


def test_run_ends_with_one_summary_line_that_fits_80_columns_then_outputs_one_per_line(profiled):
    proc, run_dir = profiled
    lines = proc.stdout.splitlines()
    summary = lines[0]
    assert len(summary) <= 80 and summary.startswith(f"succeeded · run {run_dir.name} · ")
    record = json.loads((run_dir / "run.json").read_text())
    made = [o["path"] for o in record["outputs"] if o.get("exists")]
    assert summary.endswith(f" · {len(made)} outputs")
    assert lines[1] == "outputs:" and lines[2:2 + len(made)] == [f"  {path}" for path in made]
    assert lines[2 + len(made)] == f"provenance: runs/{run_dir.name}/prov.json"


def test_progress_counts_a_rule_with_many_jobs_once():
    """Two jobs of `align`, as Snakemake logs them: `align` is named once, the count goes on."""
    out = io.StringIO()
    progress = Progress(ProgressPrinter(stream=out))
    for line in ["localrule align:", "1 of 4 steps (25%) done", "localrule align:", "2 of 4 steps (50%) done",
                 "localrule merge:", "3 of 4 steps (75%) done", "localrule snakegate_all:", "4 of 4 steps (100%) done"]:
        progress.feed(line)
    assert out.getvalue() == "  [1] align\n  [3/3] merge\n"
