"""How runs read on screen: progress, outcome, the verdict, the failure and its log, the result summary, history
rows, a diff.

Pure functions over plain data (a run record as read from run.json, a
RunFacts from runinfo.py, a diff from provenance.compare): nothing here reads
a file, touches a widget or calls the network. Times are shown as recorded
(UTC), never relative to now, so the same record always reads the same.
A run's verdict is worded through snakegate.views.verdict (the same lines as the
CLI); the key numbers after a run are the verdict's checks first (failing ones
first), then what changed against a fork's parent, then the outputs' numbers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from snakegate.tui.present import relative
from snakegate.views import verdict as verdicts
from snakegate.views.lineage import lineage, lineage_line

TIMESTAMP = re.compile(r"^\d{8}T\d{6}Z-")
LOG_TAIL_LINES = 6   # lines of a failed job's log shown (the run panel is small at 80x24)
MAX_KEY_NUMBERS = 6
STATUS_MARK = {"succeeded": "✓", "failed": "✗", "cancelled": "■", "running": "▶", "interrupted": "!",
               "incomplete": "!", "refused": "✗"}


def duration_text(seconds: Any) -> str:
    from snakegate.views.facts import duration_text as text  # one definition for the CLI, the report and the chat
    return text(seconds)


def when_text(started: Any) -> str:
    """'2026-11-22T16:09:20.123Z' -> '2026-11-22 16:09Z' (as recorded, in UTC)."""
    if not isinstance(started, str) or len(started) < 16:
        return "–"
    return f"{started[:10]} {started[11:16]}Z"


def progress_text(done: int, total: int | None, rule: str | None) -> str:
    step = f"step {done}/{total}" if total is not None else f"step {done}"
    return f"{step} · {rule}" if rule and rule != "snakegate_all" else step


# ---- one finished run: the run panel -----------------------------------------------------------------
# `explained` is the agent's explain_run result for the run (runinfo.explain): the same facts the model
# gets — for a failure {rule, exception, error, log, log_tail}, key numbers of the JSON outputs — with any
# sensitive value the run holds already scrubbed out.

def failure_text(failure: dict) -> str:
    """'ValueError: column weight is missing' from explain_run's failure facts."""
    error, exception = failure.get("error"), failure.get("exception")
    if error and exception and not str(error).startswith(str(exception)):
        return f"{exception}: {error}"
    return str(error or exception or "no message recorded")


def outcome_lines(status: str, run_id: str, record: dict, explained: dict, run_dir: Path, root: Path) -> list[str]:
    """The run panel after a run: status and duration, then what went wrong (rule, real error, log tail)."""
    lines = [f"{STATUS_MARK.get(status, '·')} {status} · {duration_text(record.get('duration_s'))}", f"run {run_id}"]
    lines += verdict_panel_lines(record)
    if status == "failed":
        f = explained.get("failure") or {}
        if f.get("rule"):
            lines.append(f"failed rule: {f['rule']}")
        lines.append(f"error: {failure_text(f)}")
        if f.get("log"):
            lines.append(f"log: {f['log']}")
        lines += [f"│ {line}" for line in (f.get("log_tail") or [])[-LOG_TAIL_LINES:]]
    elif status == "cancelled":
        by = explained.get("cancelled_by") or record.get("cancelled_by")
        running = explained.get("running_jobs") or []
        lines.append("cancelled" + (f" by {by}" if by else "") +
                     (f" while {', '.join(running)} ran" if running else "") + "; the record says how far it got")
    elif status == "incomplete":
        missing = explained.get("missing_outputs") or []
        lines.append("missing outputs: " + (", ".join(str(m) for m in missing) or "unknown"))
    elif status == "interrupted":
        lines.append("the front end stopped before the run was recorded; completed from Snakemake's records")
    if status != "succeeded":
        lines.append(f"{relative(run_dir, root)}/")
    return lines


def verdict_panel_lines(record: dict) -> list[str]:
    """The run panel's verdict: its mark and summary, and for the first failing check the params to look at
    (the panel is small; the chat's summary and `show-run` say the rest)."""
    verdict = verdicts.read(record)
    if verdict is None:
        return []
    lines = [f"verdict {verdicts.MARK[verdict['status']]} {verdicts.summary_text(verdict)}"]
    failing = [c for c in verdict["checks"] if c["status"] == "fail"]
    if failing:
        lines.append(f"  {failing[0]['name']}: {verdicts.measured_text(failing[0])}")
        if failing[0]["params"]:
            lines.append("  look at: " + ", ".join(failing[0]["params"]))
    return lines


def refusal_lines(message: str, problems: list[str]) -> list[str]:
    """A refusal at execute time: nothing ran; say so and what to do."""
    return ["✗ nothing was run: " + message, *[f"  - {p}" for p in problems],
            "Ask for a new draft (the files or the workflow may have changed since you approved it)."]


# ---- the result summary in the chat ------------------------------------------------------------------

def key_numbers(explained: dict, limit: int = MAX_KEY_NUMBERS, record: dict | None = None) -> list[str]:
    """The numbers that matter after a run, 'name = value': each check of the run's verdict (`record`, its
    run.json) with its mark, failing ones first; then for a fork what changed against its parent
    (`key = new (was old)`, explain_run's changed_from_parent); then the key numbers explain_run found in the
    run's JSON outputs (shallowest first), each number once."""
    found, seen = [], set()
    changed = {c["key"]: c for c in explained.get("changed_from_parent") or []
               if isinstance(c, dict) and isinstance(c.get("key"), str)}
    measures = {name: key for name, _output, key in verdicts.measured_keys(record or {})}
    for name, value, status in verdicts.key_checks(record or {}):
        key = measures.get(name)
        was = f" (was {_shown_number(changed[key]['parent'])})" if key in changed else ""
        found.append(f"{name} = {_number(value)} {verdicts.MARK[status]}{was}")
    seen.update(measures.values())
    for key, change in changed.items():
        if key not in seen:
            seen.add(key)
            found.append(f"{key} = {_shown_number(change.get('value'))} (was {_shown_number(change.get('parent'))})")
    for _, numbers in sorted((explained.get("key_numbers") or {}).items()):
        for key, v in (numbers or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and key not in seen:
                seen.add(key)
                found.append(f"{key} = {_number(v)}")
    return found[:limit]


def _shown_number(v: Any) -> str:
    return _number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else "none"


def _number(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:.4g}"


PLOT_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg")


def result_summary(status: str, run_id: str, record: dict, explained: dict, run_dir: Path, root: Path) -> str:
    """Markdown for the chat once a run ends: the outcome, key numbers, plots and where everything is."""
    lines = [f"**Run {run_id} {status}** in {duration_text(record.get('duration_s'))}."]
    lines += verdict_summary_lines(record)
    if status == "failed":
        f = explained.get("failure") or {}
        lines.append(f"It failed in `{f.get('rule') or 'an unknown rule'}`: {failure_text(f)}")
        if f.get("log"):
            log = f["log"] if str(f["log"]).startswith("runs/") else f"{relative(run_dir, root)}/{f['log']}"
            lines.append(f"Log: `{log}`")
    numbers = key_numbers(explained, record=record)
    if numbers:
        lines.append("Key numbers: " + ", ".join(f"`{n}`" for n in numbers))
    made = [o for o in record.get("outputs") or [] if isinstance(o, dict) and o.get("exists")]
    plots = [o["path"] for o in made if str(o.get("path", "")).lower().endswith(PLOT_SUFFIXES)]
    if plots:
        lines.append("Plots: " + ", ".join(f"`{p}`" for p in plots))
    others = [o["path"] for o in made if o["path"] not in plots]
    if others:
        lines.append("Outputs: " + ", ".join(f"`{p}`" for p in others))
    lines.append(f"Provenance: `snakegate prov {run_id}`; all runs: ctrl+o.")
    return "\n".join(lines)


def verdict_summary_lines(record: dict) -> list[str]:
    """The verdict in the chat after a run: its status and counts, then each failing check with its value
    against its threshold, what failing means and the params to look at."""
    verdict = verdicts.read(record)
    if verdict is None:
        return []
    lines = [f"Verdict: **{verdict['status']}** — {verdicts.counts_text(verdict)}."]
    for check in [c for c in verdict["checks"] if c["status"] == "fail"][:3]:
        text = f"`{check['name']}`: {verdicts.measured_text(check)}."
        if check.get("says"):
            text += f" {check['says']}"
        if check["params"]:
            text += " Look at " + ", ".join(f"`{p}`" for p in check["params"]) + "."
        lines.append(text)
    return lines


# ---- the history -------------------------------------------------------------------------------------

def history_row(record: dict) -> tuple[str, str, str, str, str]:
    """(run id, workflow, status (with the verdict: `✓ succeeded · ✗ fail`), duration, when) for one line of the
    history table."""
    status = str(record.get("status") or "unknown")
    workflow = str(record.get("workflow") or "–")
    plan = record.get("plan") if isinstance(record.get("plan"), dict) else None
    if plan is not None and isinstance(plan.get("steps"), dict):  # a plan's run: how many steps it has
        workflow += f" ({len(plan['steps'])} steps)"
    verdict = verdicts.read(record)
    judged = f" · {verdicts.MARK[verdict['status']]} {verdict['status']}" if verdict else ""
    return (str(record.get("run_id")), workflow,
            f"{STATUS_MARK.get(status, '·')} {status}{judged}", duration_text(record.get("duration_s")),
            when_text(record.get("started")))


def short_run(run_id: str) -> str:
    """The run id without its timestamp (the `when` column shows that): `20261122T160920Z-d8a69fe7` -> `d8a69fe7`."""
    return TIMESTAMP.sub("", run_id)


def made_from(record: dict) -> str:
    """The history row's second line for a run made from another: 'fork of aaaaaaaa', 'rerun of aaaaaaaa'
    (snakegate.views.lineage's reading, as `snakegate runs` lists it); '' for any other run."""
    found = lineage(record)
    if found.get("fork_of"):
        return f"fork of {short_run(found['fork_of'])}"
    if found.get("rerun_of"):
        return f"rerun of {short_run(found['rerun_of'])}"
    return ""


def made_from_line(record: dict) -> str:
    """What the highlighted run was made from, whole ('fork of 20261120T…-aaaaaaaa (changed missing_strategy)',
    with the refinement it was a point of); '' for a run made from none. Changed params by name only."""
    return lineage_line(lineage(record))


def matches(record: dict, text: str) -> bool:
    """The history filter: every word must appear in the run's id, workflow, status, verdict or start time."""
    hay = " ".join(str(record.get(k) or "") for k in ("run_id", "workflow", "status", "started")).lower()
    hay += " " + str((verdicts.read(record) or {}).get("status") or "")
    plan = record.get("plan") if isinstance(record.get("plan"), dict) else {}
    if isinstance(plan.get("steps"), dict):  # a plan's run is found by its steps' workflows too
        hay += " " + " ".join(str(w) for w in plan["steps"].values()).lower()
    return all(word in hay for word in text.lower().split())


def detail_lines(facts) -> list[str]:
    """One run opened from the history (facts: runinfo.RunFacts; params already masked)."""
    r = facts.record
    status = str(r.get("status") or "unknown")
    lines = [f"{STATUS_MARK.get(status, '·')} {status} · {duration_text(r.get('duration_s'))} · "
             f"started {when_text(r.get('started'))}",
             f"workflow: {r.get('workflow') or '–'} {r.get('version') or ''}".rstrip(),
             f"invocation: {r.get('invocation_id') or '–'}"]
    if facts.steps:  # a plan's run: its steps and what they take from each other
        lines += ["", "Steps"] + [f"  {name}: {label}" for name, label in facts.steps]
        lines += ["", "Edges"] + ([f"  {e}" for e in facts.edges] or ["  (no step takes another's output)"])
    found = lineage(r)
    if found.get("fork_of"):  # each changed param as the Parameters below show it: a sensitive one masked
        shown = dict(facts.params)
        changes = ", ".join(f"{name}={shown.get(name, '(not a param)')}" for name in found.get("changed") or [])
        lines.append(f"fork of: {found['fork_of']}" + (f" ({changes})" if changes else ""))
    elif found.get("rerun_of"):
        lines.append(f"rerun of: {found['rerun_of']}")
    if facts.explained.get("refinement"):
        lines.append(f"part of: {facts.explained['refinement']}")
    lines += verdict_detail_lines(r)
    if status == "failed":
        f = facts.explained.get("failure") or {}
        lines += ["", "Failure", f"  rule: {f.get('rule') or '–'}", f"  error: {failure_text(f)}"]
        if f.get("log"):
            lines.append(f"  log: {f['log']}")
        lines += [f"  │ {line}" for line in (f.get("log_tail") or [])[-LOG_TAIL_LINES:]]
    lines += ["", "Parameters"] + [f"  {name}: {value}" for name, value in facts.params] or ["  (none)"]
    lines += ["", "Outputs"]
    outputs = [o for o in r.get("outputs") or [] if isinstance(o, dict)]
    lines += [f"  {o.get('name')}: {o.get('path')}" + ("" if o.get("exists") else " (missing)") for o in outputs] \
        or ["  (none recorded)"]
    numbers = key_numbers(facts.explained, record=r)
    if numbers:
        lines += ["", "Key numbers"] + [f"  {n}" for n in numbers]
    lines += ["", "Provenance"]
    origin = r.get("origin") if isinstance(r.get("origin"), dict) else facts.origin or {}
    if origin:
        lines.append(f"  proposed by: {origin.get('model') or '–'} ({origin.get('proposed_by_backend') or '–'})")
        lines.append(f"  approved by: {origin.get('approved_by') or '–'} at {origin.get('approved_at') or '–'}")
    else:
        lines.append(f"  started from: {r.get('source') or 'the command line'} (no chat approval)")
    for label, value in facts.git:
        lines.append(f"  {label}: {value}")
    if not facts.git:
        lines.append(f"  git: {facts.prov_note or 'not recorded'}")
    return lines


def verdict_detail_lines(record: dict) -> list[str]:
    """The history's view of one run: a Verdict section, each check with its mark and measured value; under a
    failing one what it means and the params to look at, under an unknown one why."""
    verdict = verdicts.read(record)
    if verdict is None:
        return []
    lines = ["", f"Verdict: {verdict['status']} — {verdicts.counts_text(verdict)}"]
    for check in verdict["checks"]:
        lines.append(f"  {verdicts.MARK[check['status']]} {check['name']}: {verdicts.measured_text(check)}")
        if check["status"] == "fail":
            lines += [f"      {check['says']}"] if check.get("says") else []
            lines += ["      look at: " + ", ".join(check["params"])] if check["params"] else []
    return lines


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def diff_lines(diff: dict) -> list[str]:
    """provenance.compare.diff_runs' result, as the diff screen shows it (params first: what was changed)."""
    lines = [f"{diff['run_a']}  →  {diff['run_b']}"]
    wa, wb = diff.get("workflow") or [None, None], diff.get("version") or [None, None]
    if wa[0] != wa[1] or wb[0] != wb[1]:
        lines.append(f"workflow: {wa[0]} {wb[0]} → {wa[1]} {wb[1]}")
    params = diff.get("params") or []
    lines += ["", f"Parameters ({len(params)} changed)" if params else "Parameters: identical"]
    for c in params:
        lines.append(f"  {c['path']}: {_side(c, 'a')} → {_side(c, 'b')}")
    outputs = diff.get("outputs") or []
    same = diff.get("identical_outputs") or []
    lines += ["", f"Outputs ({len(outputs)} differ, {len(same)} identical)"]
    for o in outputs:
        values = o.get("values") or []
        lines.append(f"  {o['name']}: {o['status']}" + (f", {len(values)} value(s) changed" if values else ""))
        for v in values[:8]:
            lines.append(f"      {v['path']}: {_side(v, 'a')} → {_side(v, 'b')}")
        if len(values) > 8:
            lines.append(f"      … {len(values) - 8} more (snakegate diff --json)")
    if same:
        lines.append("  identical: " + ", ".join(same))
    if diff.get("verdict"):
        lines += [""] + verdicts.change_lines(diff["verdict"], arrow="→")
    return lines


def _side(change: dict, side: str) -> str:
    if side not in change:
        return "(absent)"
    text = _shown(change[side])
    return text if len(text) <= 40 else text[:39] + "…"
