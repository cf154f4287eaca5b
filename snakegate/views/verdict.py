"""A run's verdict as every view shows it: the mark in a run list, the section of `show-run` and the report,
the change between two runs (`diff`), the facts the model gets (`run_status`, `explain_run`, `list_runs`), and
the key numbers that matter after a run (the checks first).

Pure functions over run records (run.json as the run store reads it; the verdict read defensively by
snakegate.provenance.verdicts, one definition of how a check reads). A verdict holds no sensitive value
(run/verdict.py never lets one in), and its sentences come from the run's own workflow copy. Nothing is read
or written here; a verdict is a record for a person and a model and never decides what runs.
"""

from __future__ import annotations

from typing import Any

from snakegate.provenance.verdicts import (STATUSES, check_text, counts_text, measured_text, needs_text,
                                           number_text, read, summary_text)

__all__ = ["MARK", "STATUSES", "change_lines", "changes", "check_text", "counts_text", "for_list", "for_model",
           "key_checks", "mark", "measured_keys", "measured_text", "needs_text", "number_text", "read",
           "summary_text"]

MARK = {"pass": "✓", "fail": "✗", "unknown": "?"}
MODEL_FAILING = 10  # failing checks given to the model with their sentences; the others by name
LEGEND = "verdict: ✓ every check passed, ✗ a check failed, ? a check could not be measured"


def mark(record: dict) -> str:
    """The one-character mark of a run's verdict (✓ ✗ ?), '' when it has none."""
    verdict = read(record)
    return MARK[verdict["status"]] if verdict else ""


def for_list(record: dict) -> dict:
    """A run list's fields: {verdict: pass|fail|unknown|None, failing_checks: [names]} (the last only when any
    check failed)."""
    verdict = read(record)
    if verdict is None:
        return {"verdict": None}
    failing = [c["name"] for c in verdict["checks"] if c["status"] == "fail"]
    return {"verdict": verdict["status"], **({"failing_checks": failing} if failing else {})}


def for_model(record: dict, *, full: bool) -> dict | None:
    """The verdict as the model (and an MCP client) reads it: {status, summary, failing: [{name, value, test,
    threshold, measure, says, look_at}], unknown: [{name, reason}]} and, with `full`, every check's status and
    value (`checks`). None when the run has no verdict."""
    verdict = read(record)
    if verdict is None:
        return None
    out: dict[str, Any] = {"status": verdict["status"], "summary": summary_text(verdict)}
    failing = [c for c in verdict["checks"] if c["status"] == "fail"]
    unknown = [c for c in verdict["checks"] if c["status"] == "unknown"]
    if failing:
        out["failing"] = [{"name": c["name"], "value": c["value"], "test": c["test"], "threshold": c["threshold"],
                           **({"threshold_param": c["threshold_param"]} if c.get("threshold_param") else {}),
                           "measure": c["measure"], "says": c["says"], "look_at": c["params"]}
                          for c in failing[:MODEL_FAILING]]
        if len(failing) > MODEL_FAILING:  # a result the model reads stays small (actions.limits)
            out["failing_not_shown"] = [c["name"] for c in failing[MODEL_FAILING:]]
    if unknown:
        out["unknown"] = [{"name": c["name"], "reason": c["reason"]} for c in unknown]
    if full:
        out["checks"] = [{"name": c["name"], "status": c["status"], "value": c["value"], "needs": needs_text(c)}
                         for c in verdict["checks"]]
    return out


def changes(record_a: dict, record_b: dict) -> dict | None:
    """Two runs' verdicts check by check: {status: [a, b], checks: [{name, status: [a, b], value: [a, b],
    threshold: [a, b], needs: [a, b]}], same: [names of checks whose status and value did not change]}; a check
    only one run has is `absent` in the other. None when neither run has a verdict."""
    va, vb = read(record_a), read(record_b)
    if va is None and vb is None:
        return None
    by_a = {c["name"]: c for c in (va or {}).get("checks", [])}
    by_b = {c["name"]: c for c in (vb or {}).get("checks", [])}
    names = list(by_a) + [n for n in by_b if n not in by_a]
    rows, same = [], []
    for name in names:
        a, b = by_a.get(name), by_b.get(name)
        row = {"name": name, "status": [a["status"] if a else "absent", b["status"] if b else "absent"],
               "value": [a["value"] if a else None, b["value"] if b else None],
               "threshold": [a["threshold"] if a else None, b["threshold"] if b else None],
               "needs": [needs_text(a) if a else "", needs_text(b) if b else ""]}
        if a and b and row["status"][0] == row["status"][1] and row["value"][0] == row["value"][1]:
            same.append(name)
        else:
            rows.append(row)
    return {"status": [va["status"] if va else None, vb["status"] if vb else None], "checks": rows, "same": same}


def change_lines(diff: dict, arrow: str = "->") -> list[str]:
    """`changes()` as lines: the verdict A -> B, then each check that changed (status, value, threshold), then
    how many stayed the same."""
    a, b = (s or "none" for s in diff["status"])
    total = len(diff["checks"]) + len(diff["same"])
    head = f"verdict: {a} {arrow} {b}" if a != b else f"verdict: {a} in both"
    if not diff["checks"]:
        return [head + (f" (all {total} checks the same)" if total else "")]
    lines = [head + f" ({len(diff['checks'])} of {total} checks changed):"]
    for row in diff["checks"]:
        (sa, sb), (xa, xb), (na, nb) = row["status"], row["value"], row["needs"]
        status = f"{sa} {arrow} {sb}" if sa != sb else sa
        value = f"{number_text(xa)} {arrow} {number_text(xb)}" if (xa, xb) != (None, None) else ""
        ta, tb = (number_text(t) for t in row["threshold"])
        if na and nb and na != nb:  # when only the threshold moved: `>= 0.5 -> 0.4 (param floor)`
            needs = na.replace(ta, f"{ta} {arrow} {tb}", 1) if na.replace(ta, tb, 1) == nb else f"{na} {arrow} {nb}"
        else:
            needs = na or nb
        needs = f"needs {needs}" if needs else ""
        detail = ", ".join(p for p in (value, needs) if p)
        lines.append(f"  {row['name']}: {status}" + (f" ({detail})" if detail else ""))
    return lines


def report_rows(record: dict) -> dict | None:
    """The report's verdict section: {status, summary, checks: [{name, status, measured, says, look_at, each}]};
    what failing means and the params to look at only for a check that failed. None without a verdict."""
    verdict = read(record)
    if verdict is None:
        return None
    rows = []
    for c in verdict["checks"]:
        failed = c["status"] == "fail"
        items = [f"{i['at']} = {number_text(i['value'])} ({i['status']})" for i in c.get("values") or []]
        rows.append({"name": c["name"], "status": c["status"], "measured": measured_text(c),
                     "says": c["says"] if failed else None, "look_at": c["params"] if failed else [],
                     "each": items if c["status"] != "pass" else []})
    return {"status": verdict["status"], "summary": summary_text(verdict), "checks": rows}


def key_checks(record: dict) -> list[tuple[str, Any, str]]:
    """(check name, measured value, status) of every check that measured a value, failing checks first: the
    numbers that matter after a run."""
    verdict = read(record)
    if verdict is None:
        return []
    order = {"fail": 0, "unknown": 1, "pass": 2}
    measured = [c for c in verdict["checks"] if c["value"] is not None]
    return [(c["name"], c["value"], c["status"]) for c in sorted(measured, key=lambda c: order[c["status"]])]


def measured_keys(record: dict) -> list[tuple[str, str, str]]:
    """(check name, output name, key) of every check that reads a number of a JSON output, failing checks first;
    the key as a JSON output's numbers are named (`/a/b` -> `a.b`), so a run's summary can show them first."""
    verdict = read(record)
    if verdict is None:
        return []
    order = {"fail": 0, "unknown": 1, "pass": 2}
    return [(c["name"], c.get("output") or "", c["measure"][1:].replace("/", "."))
            for c in sorted(verdict["checks"], key=lambda c: order[c["status"]])
            if isinstance(c.get("measure"), str) and c["measure"].startswith("/")]
