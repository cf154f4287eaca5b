"""How `snakegate runs` and `snakegate show-run` read at 80 columns: the run list (header, newest last,
filters, a line under each fork or rerun naming the run it was made from, as snakegate.views.lineage reads it)
and one run's record (params, readable lists, where it came from).

Pure functions from records (run.json as read by the run store) to lines; the commands in run_cmds.py
read the run folders and print. Sensitive params are masked (snakegate.views.params) before they get here.
A plan's run lists as the plan with a line naming its steps, is found by any step's workflow, and shows its
steps, edges, and params and outputs by step (snakegate.views.plan).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from snakegate.commands.layout import field, table, width, wrap
from snakegate.errors import UserError
from snakegate.views.facts import cut_line, duration_text, left_in_queue
from snakegate.views.lineage import lineage_line

LABEL = 16
_RELATIVE = re.compile(r"(\d+)\s*(m|min|h|d|w)", re.I)
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


# ---- the list ------------------------------------------------------------------------------------
def parse_since(text: str, now: _dt.datetime | None = None) -> _dt.datetime:
    """--since: a UTC date or time (2026-11-24, 2026-11-24T04:00, with or without Z) or an age (90m, 12h, 7d, 2w)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    relative = _RELATIVE.fullmatch(text.strip())
    if relative:
        return now - _dt.timedelta(seconds=int(relative.group(1)) * _UNITS[relative.group(2).lower()])
    try:
        when = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"--since {text!r} is not a time; give a UTC date or time such as 2026-11-24 or "
                        "2026-11-24T14:00, or an age such as 90m, 12h, 7d or 2w") from None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def start_key(row: dict) -> str:
    """What 'newest last' sorts by: the recorded start (UTC ISO text), else the folder's time."""
    return str(row.get("started") or row.get("folder_time") or "")


def select(rows: list[dict], workflow: str | None, status: str | None, since: _dt.datetime | None,
           limit: int | None, verdict: str | None = None) -> list[dict]:
    """The rows that pass the filters, oldest first by start time; the newest `limit` of them."""
    out = [r for r in rows if (not workflow or runs_workflow(r, workflow))
           and (not status or r.get("status") == status) and (not verdict or r.get("verdict") == verdict)]
    if since is not None:
        out = [r for r in out if _time(start_key(r)) and _time(start_key(r)) >= since]
    out.sort(key=lambda r: (start_key(r), str(r.get("run_id"))))
    return out[-limit:] if limit else out


def runs_workflow(row: dict, workflow: str) -> bool:
    """Whether a run ran `workflow`: its own, or (a plan's run) one of its steps'."""
    return row.get("workflow") == workflow or any(s.get("workflow") == workflow for s in row.get("steps") or [])


def _time(text: str) -> _dt.datetime | None:
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def started_text(started: Any) -> str:
    """'2026-11-22T16:09:20.123Z' -> '2026-11-22 16:09' (UTC, as recorded)."""
    return f"{started[:10]} {started[11:16]}" if isinstance(started, str) and len(started) >= 16 else "-"


def runs_lines(rows: list[dict], total: int, total_width: int | None = None) -> list[str]:
    """The table: RUN, WORKFLOW, STATUS (with the verdict's mark: `succeeded ✗`), STARTED (UTC), TIME; a row's
    note on the lines below it; the marks' legend under the table when one is shown. A run that did not succeed
    is marked only when a check failed: its unknown checks are what its status already says, and the column
    stays as narrow as `interrupted`."""
    from snakegate.views.verdict import LEGEND, MARK

    def marked(r: dict) -> str:
        verdict = r.get("verdict") or ""
        return MARK.get(verdict, "") if r.get("status") == "succeeded" or verdict == "fail" else ""

    def status(r: dict) -> str:
        return str(r.get("status") or "unknown") + (f" {marked(r)}" if marked(r) else "")
    cells = [[str(r["run_id"]), str(r.get("workflow") or "-"), status(r),
              started_text(r.get("started")), duration_text(r.get("duration_s"), compact=True)] for r in rows]
    lines = table(["RUN", "WORKFLOW", "STATUS", "STARTED (UTC)", "TIME"], cells, flexible=1, right={4},
                  total=total_width)
    out = [lines[0]]
    for r, line in zip(rows, lines[1:]):
        out.append(line)
        if r.get("kind") == "plan":
            out += wrap(plan_line(r), indent=4, total=total_width)
        if lineage_line(r):
            out += wrap(lineage_line(r), indent=4, total=total_width)
        if r.get("note"):
            out += wrap(f"note: {r['note']}", indent=4, total=total_width)
    if len(rows) < total:
        out.append(f"({len(rows)} of {total} runs shown, newest last)")
    if any(marked(r) for r in rows):
        out += wrap(LEGEND + " (`snakegate show-run RUN` says which and why)", total=total_width)
    return out


def plan_line(row: dict) -> str:
    """The line under a plan's run: 'plan sex-from-size, 2 steps: clean (tabular-profile), bench (classifier-…)'."""
    steps = row.get("steps") or []
    count = f"{len(steps)} step{'s' if len(steps) != 1 else ''}"
    label = f"plan {row['plan']}" if row.get("plan") else "plan (no label)"
    return f"{label}, {count}: " + ", ".join(f"{s['name']} ({s.get('workflow') or '?'})" for s in steps)


# ---- one run -------------------------------------------------------------------------------------
def _items(value: Any) -> list:
    """A recorded list, or [] for anything else (a record edited by hand)."""
    return value if isinstance(value, list) else []


def value_lines(label: str, value: Any, indent: int = 0, label_width: int = LABEL,
                total: int | None = None) -> list[str]:
    from snakegate.views.params import value_text
    return field(label, value_text(value), label_width=label_width, indent=indent, total=total)


def _named_lines(rows: list[tuple[str, str]], indent: int, total: int | None, names: list[str] | None = None
                 ) -> list[str]:
    """`name  value` lines, the names in one column (up to 24 wide; as wide as the longest of `names` when
    given: one column across several groups)."""
    name_width = min(max(len(name) for name in (names or [n for n, _ in rows])) + 2, 24)
    return [line for name, value in rows for line in field(name, value, label_width=name_width, indent=indent,
                                                          total=total)]


def _output_rows(outputs: list[dict], step: str | None = None) -> list[tuple[str, str]]:
    from snakegate.views.plan import own_name

    return [(own_name(o.get("name"), step) if step else str(o.get("name")),
             f"{o.get('path')} ({'present' if o.get('exists') else 'missing'})") for o in outputs]


def plan_lines(plan, record: dict, total: int | None = None) -> dict[str, list[str]]:
    """A plan's run in show-run's sections: `steps` (name, workflow, version), `edges`, `params` and `outputs`
    under each step (values already masked by views.plan)."""
    from snakegate.views.plan import outputs_by_step, shown_params

    steps = ["steps"] + _named_lines([(s.name, s.label) for s in plan.steps], 2, total) if plan.steps else []
    edges = ["edges"] + [line for e in plan.edges for line in wrap(e.text, indent=4, first="  ", total=total)] \
        if plan.edges else []
    params: list[str] = []
    shown = {step.name: shown_params(step) for step in plan.steps}
    names = [n for rows in shown.values() for n, _ in rows]
    for step, rows in shown.items():
        if rows:
            params += [f"  {step}"] + _named_lines(rows, 4, total, names)
    outputs: list[str] = []
    grouped = {step: _output_rows(listed, step) for step, listed in outputs_by_step(record, plan).items()}
    names = [n for rows in grouped.values() for n, _ in rows]
    for step, rows in grouped.items():
        outputs += [f"  {step or '(no step)'}"] + _named_lines(rows, 4, total, names)
    return {"steps": steps, "edges": edges, "params": ["params"] + params if params else [],
            "outputs": ["outputs"] + outputs if outputs else []}


def proof_lines(check: dict | None, run_id: str, total: int | None = None) -> list[str]:
    """The warning at the top of a record that does not prove itself (views.proof): what failed, what to do."""
    from snakegate.views.proof import warning

    found = warning(check, run_id) if check is not None else None
    if found is None:
        return []
    headline, problems, todo = found
    out = wrap(f"warning: {headline}:", indent=2, first="", total=total)
    for problem in problems:
        out += wrap(problem, indent=4, first="  - ", total=total)
    return out + wrap(todo, indent=2, first="  ", total=total)


def verdict_lines(record: dict, total: int | None = None) -> tuple[list[str], list[str]]:
    """(the `verdict` line, the `checks` section): each check's status and measured value against its test and
    threshold; under a failing check what failing means and the params to look at; under an unknown one why."""
    from snakegate.views.verdict import measured_text, number_text, read, summary_text

    verdict = read(record)
    if verdict is None:
        return [], []
    head = value_lines("verdict", summary_text(verdict), total=total)
    if not verdict["checks"]:
        return head, []
    names = [c["name"] for c in verdict["checks"]]
    name_width = min(max(len(n) for n in names) + 2, 24)
    below = 2 + name_width
    out = ["checks"]
    for check in verdict["checks"]:
        out += field(check["name"], f"{check['status']}  {measured_text(check)}", label_width=name_width, indent=2,
                     total=total)
        items = [i for i in check.get("values") or [] if i["status"] != "pass"]  # a `{param}` pointer's items
        if items and check["status"] != "pass":
            shown = ", ".join(f"{i['at']} {number_text(i['value'])} {i['status']}" for i in items[:8])
            more = f" (and {len(items) - 8} more)" if len(items) > 8 else ""
            out += wrap(f"items: {shown}{more}", indent=below, total=total)
        if check["status"] == "fail":
            if check.get("says"):
                out += wrap(check["says"], indent=below, total=total)
            if check.get("params"):
                out += wrap("look at: " + ", ".join(check["params"]), indent=below, total=total)
    return head, out


def show_run_lines(record: dict, origin, params: list[tuple[str, str]], parent: dict | None, run_dir,
                   note: str | None, total: int | None = None, plan=None, proof: dict | None = None) -> list[str]:
    """One run: a warning when its record does not prove itself (`proof`: views.proof.record_check), its facts
    and verdict, where it came from, its params, its checks, what went wrong, its outputs, its folder. A plan's
    run (`plan`: views.plan.PlanView): its steps, the edges between them, and params and outputs by step (its
    checks are `<step>.<check>`)."""
    from snakegate.views.facts import refinement_of

    out: list[str] = proof_lines(proof, str(record.get("run_id")), total)
    sections = plan_lines(plan, record, total) if plan is not None else None
    verdict, checks = verdict_lines(record, total)

    def put(label, value, indent=0, label_width=LABEL):
        if value not in (None, "", []):
            out.extend(value_lines(label, value, indent=indent, label_width=label_width, total=total))

    put("run_id", record.get("run_id"))
    if plan is not None:
        put("plan", plan.summary)
    else:
        put("workflow", " ".join(str(v) for v in (record.get("workflow"), record.get("version")) if v))
    put("status", record.get("status"))
    out += verdict
    put("stage", record.get("stage"))
    put("source", origin.source if origin.approved_by else origin.door)
    if origin.approved_by:
        put("approved_at", origin.approved_at)
    put("operator", origin.operator)
    for key in ("started", "ended"):
        put(key, record.get(key))
    put("duration_s", record.get("duration_s"))
    put("exit_code", record.get("exit_code"))
    put("invocation_id", record.get("invocation_id"))
    if parent:
        changes = "; ".join(f"{k}: {v}" for k, v in parent["changes"])
        put(f"{parent['kind']}_of", parent["run_id"] + (f" ({changes})" if changes else ""))
    refinement = refinement_of(record)
    put("refinement", refinement.removeprefix("refinement ") if refinement else None)
    if sections is not None:
        out += sections["steps"] + sections["edges"] + sections["params"]
    elif params:
        out += ["params"] + _named_lines(params, 2, total)
    out += checks
    put("error", record.get("error"))
    failure = record.get("failure") if isinstance(record.get("failure"), dict) else {}
    put("failed_rule", failure.get("rule") or record.get("failed_rule"))
    put("log", failure.get("log") or record.get("failed_log"))
    room = (total or width()) - LABEL - 2
    for line in _items(failure.get("log_tail")):  # a log line is cut in the middle, never reflowed
        out.append(f"{'':<{LABEL}}| {cut_line(str(line).rstrip(), room)}")
    for copy in _items(failure.get("cluster_logs")):
        if isinstance(copy, dict):
            put("cluster log", f"{copy.get('path')} (from {copy.get('source')}, sha256 "
                               f"{str(copy.get('sha256'))[:12]}…)")
    put("cancelled_by", record.get("cancelled_by"))
    if record.get("status") == "running" and record.get("snakemake_pid"):
        pid = record["snakemake_pid"]
        put("snakemake_pid", f"{pid} (stop it with kill -TERM {pid})")
    put("running_jobs", record.get("running_jobs"))
    put("interrupted_detected_at", record.get("interrupted_detected_at"))
    queued = left_in_queue(record)
    if queued is not None:  # a command on a line of its own, never wrapped, so it can be copied
        put("slurm jobs", "may still be queued or running: nobody cancelled them")
        put("see them", queued[0], indent=2)
        put("cancel them", queued[1], indent=2)
    put("missing_outputs", record.get("missing_outputs"))
    for change in [c for c in _items(record.get("input_changed")) if isinstance(c, dict)]:
        gated, now = str(change.get("gated_sha256"))[:12], str(change.get("current_sha256"))[:12]
        put("input_changed", f"{change.get('param')}: {change.get('path')} (gated sha256 {gated}…, now {now}…)")
    outputs = [o for o in record.get("outputs") or [] if isinstance(o, dict)]
    if sections is not None:
        out += sections["outputs"]
    elif outputs:
        out += ["outputs"] + _named_lines(_output_rows(outputs), 2, total)
    put("partial", record.get("partial_outputs"))
    put("note", note)
    from pathlib import Path

    from snakegate.views.facts import relative_to
    put("folder", relative_to(run_dir, Path.cwd()))
    return out
