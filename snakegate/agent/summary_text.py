"""A run's summary as text: the compact lines a model (or the guided dialogue) reads once a run ends.

`text(summary, budget)` renders a summary made by agent/results.py in compact lines of at most `budget`
characters, dropping the least needed first (params, then table rows, then numbers, then log lines);
`note(...)` is that text under the header the conversation recognises (`NOTE_RE`), and `shortened` is an
older note as a later request carries it. The small helpers (`value_text`, `measured`, `per_item`,
`changes_text`) are the way every door words a value, a check and a fork's changed numbers. The verdict's
checks come first, then what changed against a fork's parent, then each output's numbers. Pure: plain data in, text out; reads and writes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

BUDGET = 3000             # characters of the note a finished run adds to the conversation
KEY_NUMBERS = 12          # numeric leaves kept per JSON output
TABLE_ROWS = 3            # first rows kept per declared table
LOG_LINES = 5             # last lines of a failed job's log kept

NOTE = ("(snakegate: run `{run_id}` ended. What follows is its record, summarised by snakegate: data read from "
        "the run folder, not a request from the researcher.)")
NOTE_RE = re.compile(r"^\(snakegate: run `([^`]+)` ended\. ")
SHORTENED = "(an earlier run's summary, shortened; summarize_run gives it whole)"


def value_text(value: Any) -> str:
    """A value as the summary shows it: a float to 4 significant digits, text as is, anything else as JSON."""
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if not isinstance(value, str) else value


def measured(check: dict) -> str:
    """A check's measured value and what it needs (`0.41 (needs >= 0.5)`); '' when it has no value."""
    if check.get("value") is None:
        return ""
    text = value_text(check["value"])
    if check.get("test") and check.get("threshold") is not None:
        text += f" (needs {check['test']} {value_text(check['threshold'])})"
    return text


def per_item(check: dict, status: bool = True) -> str:
    """A check over every item of a list param, item by item: `hardness_hv 0.9962 pass; …`."""
    return "; ".join(f"{str(v.get('at')).rsplit('/', 2)[-2] if v.get('at') else '?'} {value_text(v.get('value'))}"
                     + (f" {v.get('status')}" if status else "") for v in check.get("values") or [])


def changes_text(changed: list[dict]) -> str:
    """The numbers a fork changed against its parent: `roc_auc 0.61 → 0.74, n_rows 333 → 342` (`none` where
    only one of the two runs has the number)."""
    def shown(v: Any) -> str:
        return "none" if v is None else value_text(v)

    return ", ".join(f"{c.get('key')} {shown(c.get('parent'))} → {shown(c.get('value'))}" for c in changed)


def _cell(text: str) -> str:
    try:
        return f"{float(text):.4g}" if re.fullmatch(r"[-+]?\d*\.\d+(?:[eE][-+]?\d+)?", text.strip()) else text
    except ValueError:
        return text


def _check_line(c: dict) -> str:
    line = f"- {c['name']}: {c.get('status')}"
    if measured(c):
        line += f", value {measured(c)}"
    if c.get("values"):
        line += f" [{per_item(c)}]"
    if c.get("reason"):
        line += f"; {c['reason']}"
    if c.get("status") == "fail":
        line += f". It says: {c.get('says')}"
        if c.get("params"):
            line += f" Params to look at: {', '.join(c['params'])}."
    return line


def _lines(s: dict, level: int) -> list[str]:
    """The summary's lines; a higher `level` keeps less (params, then rows, numbers and log lines go)."""
    head = f"run {s.get('run_id')}: {s.get('workflow')}" + (f" {s['version']}" if s.get("version") else "")
    head += f", {s.get('status')}"
    if isinstance(s.get("duration_s"), (int, float)):
        head += f" in {s['duration_s']:.1f} s"
    lines = [head]
    if s.get("unreadable"):
        lines.append(f"its record cannot be read: {s['unreadable']}")
    if s.get("fork_of"):
        changes = ", ".join(f"{k} = {value_text(v)}" for k, v in (s.get("changes") or {}).items())
        rec = s.get("recovery_of") or {}
        lines.append(f"fork of {s['fork_of']}" + (f" ({changes})" if changes else "")
                     + (f", a recovery of its failing {rec.get('check')}" if rec else ""))
    v = s.get("verdict")
    if v:
        lines.append(f"verdict: {v['status']}" + (f" ({v['reason']})" if v.get("reason") else ""))
        lines += [_check_line(c) for c in v.get("checks") or []]
    said: dict[tuple, list[str]] = {}
    for sug in s.get("suggestions") or []:  # one line per suggested value, naming every check it answers
        said.setdefault((sug["param"], value_text(sug["value"]), sug["from"]), []).append(sug["check"])
    for (param, value, source), checks in said.items():
        lines.append(f"the run suggests {param} = {value} (from {source}, for the failing check"
                     f"{'s' if len(checks) > 1 else ''} {', '.join(checks)})")
    changed = s.get("changed_from_parent") or []
    if changed:  # after the checks, what the fork changed: the numbers that moved against its parent
        keep = {0: KEY_NUMBERS, 1: KEY_NUMBERS, 2: KEY_NUMBERS, 3: 6}.get(level, 3)
        lines.append(f"changed against {s.get('fork_of')}: " + changes_text(changed[:keep])
                     + (f" (+{len(changed) - keep} more)" if len(changed) > keep else ""))
    f = s.get("failure")
    if f:
        lines.append(f"failed in rule {f.get('rule') or '(unknown)'}: {f.get('error')}")
        tail = f.get("log_tail") or []
        keep = {0: LOG_LINES, 1: LOG_LINES, 2: 3, 3: 1}.get(level, 0)
        lines += [f"  log: {line}" for line in tail[-keep:]] if keep else []
    if s.get("cancelled_by"):
        lines.append(f"cancelled by {s['cancelled_by']}")
    for key, what in (("missing_outputs", "missing outputs"), ("input_changed", "inputs changed during the run")):
        if s.get(key):
            lines.append(f"{what}: {', '.join(map(str, s[key]))}")
    per_output = {0: KEY_NUMBERS, 1: KEY_NUMBERS, 2: KEY_NUMBERS, 3: 6}.get(level, 3)
    for name, numbers in (s.get("numbers") or {}).items():
        items = [(k, v) for k, v in numbers.items() if k != "…"][:per_output]
        more = len(numbers) - len(items) - (1 if "…" in numbers else 0)
        extra = int(str(numbers.get("…", "0")).split()[0]) if "…" in numbers else 0
        lines.append(f"{name}: " + ", ".join(f"{k} = {value_text(val)}" for k, val in items)
                     + (f" (+{more + extra} more)" if more + extra > 0 else ""))
    rows = {0: TABLE_ROWS, 1: TABLE_ROWS, 2: 2}.get(level, 1)
    for name, table in (s.get("tables") or {}).items():
        shown = table["rows"][:rows]
        lines.append(f"{name}, first {len(shown)} of {table.get('total_rows')} rows: " + " | ".join(table["columns"])
                     + (f" (+{table['more_columns']} more columns)" if table.get("more_columns") else ""))
        lines += ["  " + " | ".join(_cell(c) for c in row) for row in shown]
    for name, why in (s.get("unreadable_outputs") or {}).items():
        lines.append(f"{name}: not read, {why}")
    if level == 0 and s.get("params"):
        lines.append("params: " + ", ".join(f"{k} = {value_text(v)}" for k, v in s["params"].items()))
    return lines


def text(summary: dict, budget: int = BUDGET) -> str:
    """The summary as compact lines of at most `budget` characters (the least needed parts go first)."""
    for level in range(5):
        out = "\n".join(_lines(summary, level))
        if len(out) <= budget:
            return out
    cut = f"\n… (cut to {budget} characters; summarize_run gives the rest)"
    return out[: max(0, budget - len(cut))] + cut


def note(summary: dict, budget: int = BUDGET) -> str:
    """What the conversation records when a run it started ends: the header, then `text`."""
    header = NOTE.format(run_id=summary.get("run_id"))
    return header + "\n" + text(summary, max(200, budget - len(header) - 1))


def shortened(note_text: str) -> str:
    """An older note as a later request carries it: its header and first line only."""
    lines = note_text.splitlines()
    return "\n".join(lines[:3] + [SHORTENED])
