"""A stopped run's record says what happened, with sub-second times (issue 28 §3): a job a cancel or a kill
stopped has its own start to the millisecond (the guard's, runs/<id>/jobio/: Snakemake's log has whole seconds,
which made such a job appear to start before its input existed); a killed job is `interrupted` and counted as
incomplete, not `cancelled`; a killed run's end is not before the kill (the heartbeat's bound) nor after it was
found dead.

The runs are the session's: prov_runs.py's cancelled run (SIGINT while its second job sleeps) and
curated_kinds.py's interrupted runs (`snakegate run` and its Snakemake killed with SIGKILL while the first job
of each curated workflow sleeps; `kill_sent` is the moment the kill was sent).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from curated_kinds import CURATED
from prov_iris import run_ident
from prov_runs import prov_json, val


def when(text) -> float:
    return dt.datetime.fromisoformat(str(val(text)).replace("Z", "+00:00")).timestamp()


def jobs_of(run_dir) -> dict[str, dict]:
    """rule -> its job's PROV activity (one job per rule in these runs)."""
    prefix = f"{run_ident(run_dir)}/job/"
    return {ident[len(prefix):].split("/")[0]: attrs for ident, attrs in prov_json(run_dir)["activity"].items()
            if ident.startswith(prefix)}


def guard_starts(run_dir) -> dict[str, float]:
    """rule -> the start the guard saw (epoch seconds to the microsecond)."""
    records = [json.loads(p.read_text()) for p in (run_dir / "jobio").glob("*.json")]
    return {r["rule"]: r["start"] for r in records if isinstance(r.get("start"), float)}


def test_a_cancelled_job_has_its_own_start_to_the_millisecond(cancelled_run):
    job = jobs_of(cancelled_run)["wait"]
    assert val(job["sg:status"]) == "cancelled"
    assert abs(when(job["prov:startTime"]) - guard_starts(cancelled_run)["wait"]) < 0.001


def test_a_cancelled_job_starts_after_the_job_that_made_its_input_ended(cancelled_run):
    jobs = jobs_of(cancelled_run)
    assert val(jobs["copy"]["sg:status"]) == "succeeded"
    assert when(jobs["wait"]["prov:startTime"]) >= when(jobs["copy"]["prov:endTime"])


def test_a_cancelled_run_counts_its_stopped_job_as_cancelled(cancelled_run):
    run = prov_json(cancelled_run)["activity"][run_ident(cancelled_run)]
    assert val(run["sg:status"]) == "cancelled"
    assert val(run["sg:jobsCancelled"]) == 1 and val(run["sg:jobsSucceeded"]) == 1


@pytest.mark.parametrize("curated_kinds", CURATED, indirect=True)
def test_a_killed_job_is_interrupted_with_its_own_start(curated_kinds):
    run_dir = curated_kinds.runs["interrupted"]
    starts = guard_starts(run_dir)
    stopped = {rule: job for rule, job in jobs_of(run_dir).items() if val(job["sg:status"]) != "succeeded"}
    assert stopped, "the kill came while a job ran"
    for rule, job in stopped.items():
        assert val(job["sg:status"]) == "interrupted", rule
        assert abs(when(job["prov:startTime"]) - starts[rule]) < 0.001, rule
    run = prov_json(run_dir)["activity"][run_ident(run_dir)]
    assert val(run["sg:jobsIncomplete"]) == len(stopped) and "sg:jobsCancelled" not in run


@pytest.mark.parametrize("curated_kinds", CURATED, indirect=True)
def test_a_killed_run_ends_not_before_the_kill_nor_after_it_was_found(curated_kinds):
    run_dir, kill_sent = curated_kinds.runs["interrupted"], curated_kinds.kill_sent
    record = json.loads((run_dir / "run.json").read_text())
    ended, found = when(record["ended"]), when(record["interrupted_detected_at"])
    assert kill_sent <= ended <= found
    run = prov_json(run_dir)["activity"][run_ident(run_dir)]
    assert abs(when(run["prov:endTime"]) - ended) < 0.001
    for rule, job in jobs_of(run_dir).items():
        assert when(job["prov:startTime"]) <= ended, rule
