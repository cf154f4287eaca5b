"""What a run was made from, as its record says it: a fork of another run (and which params the fork changed), a
rerun of one, a point of a bounded refinement. One reading for every door that lists runs: `snakegate runs`
(a line under each such run) and the chat's history (a column and the highlighted run's line).

Pure functions of a run record (run.json as the run store read it): nothing read, nothing written. Only the
names of changed params are given, never their values (a value may be sensitive), each cut to a line.
"""

from __future__ import annotations

from snakegate.views.facts import cut_line, refinement_of


def lineage(record: dict) -> dict:
    """What a run was made from, for the listing: {fork_of, changed, rerun_of, refinement}, each only when
    run.json says so (names of changed params only, never their values)."""
    out: dict = {}
    if isinstance(record.get("parent_run"), str):
        out["fork_of"] = cut_line(record["parent_run"], 80)
        changes = record.get("fork_changes")
        if isinstance(changes, dict) and changes:
            out["changed"] = [cut_line(name, 60) for name in list(changes)[:10]]
    elif isinstance(record.get("rerun_of"), str):
        out["rerun_of"] = cut_line(record["rerun_of"], 80)
    refinement = refinement_of(record)
    if refinement:
        out["refinement"] = refinement
    return out


def lineage_line(row: dict) -> str:
    """The line under a run made from another: 'fork of 20261120T…-aaaaaaaa (changed missing_strategy)', 'rerun
    of …', with the refinement it was a point of; '' for any other run."""
    parts = []
    if row.get("fork_of"):
        changed = f" (changed {', '.join(row['changed'])})" if row.get("changed") else ""
        parts.append(f"fork of {row['fork_of']}{changed}")
    elif row.get("rerun_of"):
        parts.append(f"rerun of {row['rerun_of']}")
    if row.get("refinement"):
        parts.append(row["refinement"])
    return "; ".join(parts)
