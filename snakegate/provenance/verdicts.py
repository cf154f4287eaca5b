"""A recorded verdict (run.json's `verdict`, written by snakegate.run.verdict) read back for a person: its checks
taken defensively from a record anyone may have edited, and one line per check.

Every reader of a verdict starts here: the CLI (`runs`, `show-run`, `diff`), the report, the chat and the
model's run actions (through snakegate.views.verdict), and the RO-Crate export. A record is data an attacker
may have written: a verdict that is not the shape run/verdict.py writes is `unknown` with the reason "the
recorded verdict cannot be read", a check keeps only the fields of the known shape, every text is cut to
one readable line without control characters, a value is a finite number or none, and at most CHECKS
checks are read. Pure: nothing read, nothing written.
"""

from __future__ import annotations

import math
import re
from typing import Any

STATUSES = ("pass", "fail", "unknown")
TESTS = (">", ">=", "<", "<=", "==", "!=")
CHECKS = 100          # checks read from one record (a plan of many steps has a few dozen)
ITEMS = 50            # items of a `{param}` pointer read per check
TEXT_CHARS = 600      # a check's sentence (`says`) or reason
NAME_CHARS = 120      # a check's name, output, measure, a param's name
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
DAMAGED = "the recorded verdict cannot be read (run.json's `verdict` is not the shape snakegate writes)"


def _text(value: Any, limit: int) -> str | None:
    """One line of text without control characters (a terminal's escape sequences), cut to `limit`."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(_CONTROL.sub(" ", value).split())
    return value if len(value) <= limit else value[:limit - 1] + "…"


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return value if math.isfinite(value) else None
    except OverflowError:
        return None


def _status(value: Any) -> str:
    return value if value in STATUSES else "unknown"


def _check(raw: dict) -> dict:
    out = {"name": _text(raw.get("name"), NAME_CHARS) or "(unnamed)", "status": _status(raw.get("status")),
           "value": _number(raw.get("value")), "test": raw.get("test") if raw.get("test") in TESTS else None,
           "threshold": _number(raw.get("threshold")),
           "threshold_param": _text(raw.get("threshold_param"), NAME_CHARS),
           "says": _text(raw.get("says"), TEXT_CHARS), "output": _text(raw.get("output"), NAME_CHARS),
           "measure": _text(raw.get("measure"), NAME_CHARS), "reason": _text(raw.get("reason"), TEXT_CHARS),
           "params": [p for p in (_text(x, NAME_CHARS) for x in raw.get("params") or [] if isinstance(x, str)) if p]
           if isinstance(raw.get("params"), list) else []}
    items = raw.get("values")
    if isinstance(items, list):
        out["values"] = [{"at": _text(i.get("at"), NAME_CHARS), "value": _number(i.get("value")),
                          "status": _status(i.get("status"))} for i in items[:ITEMS] if isinstance(i, dict)]
    return out


def read(record: dict) -> dict | None:
    """{status, checks, reason} of a run record's verdict, every field of the shape run/verdict.py writes and
    nothing else; None when the record has no verdict (a run still going, or made before verdicts)."""
    raw = record.get("verdict") if isinstance(record, dict) else None
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("status") not in STATUSES or \
            not isinstance(raw.get("checks", []), list):
        return {"status": "unknown", "checks": [], "reason": DAMAGED}
    checks = [_check(c) for c in raw.get("checks", [])[:CHECKS] if isinstance(c, dict)]
    return {"status": raw["status"], "checks": checks, "reason": _text(raw.get("reason"), TEXT_CHARS)}


def number_text(value: Any) -> str:
    """A measured value or threshold as a person reads it: 3, 0.75, 6.894e-10, -6.714; `none` when absent."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "none"
    return str(value) if isinstance(value, int) else f"{value:.4g}"


def needs_text(check: dict) -> str:
    """What a check holds its value to: `>= 0.4` (`>= 0.4 (param floor)` for a param's value); '' if unknown."""
    if check.get("test") is None or check.get("threshold") is None:
        return f"{check['test']} param {check['threshold_param']}" if check.get("test") and \
            check.get("threshold_param") else ""
    param = f" (param {check['threshold_param']})" if check.get("threshold_param") else ""
    return f"{check['test']} {number_text(check['threshold'])}{param}"


def measured_text(check: dict) -> str:
    """The measured value against the test: `/score = 0.3, needs >= 0.4 (param floor)`; for an unknown check
    why it could not be measured."""
    if check.get("status") == "unknown" and check.get("value") is None:
        return check.get("reason") or "not measured"
    what = f"{check['measure']} = " if check.get("measure") else ""
    needs = needs_text(check)
    return f"{what}{number_text(check.get('value'))}" + (f", needs {needs}" if needs else "")


def check_text(check: dict) -> str:
    """One line: `score fail: /score = 0.3, needs >= 0.4 (param floor)`."""
    return f"{check['name']} {check['status']}: {measured_text(check)}"


def summary_text(verdict: dict) -> str:
    """`fail: 2 of 3 checks failed (a, b)`, `pass: all 3 checks passed`, `unknown: 1 of 3 could not be
    measured (c)`, or `unknown: <why>` when there is no check to count."""
    return f"{verdict['status']}: {counts_text(verdict)}"


def counts_text(verdict: dict) -> str:
    """The summary without its status: `2 of 3 checks failed (a, b)`."""
    checks = verdict["checks"]
    if not checks:
        return verdict.get("reason") or "the workflow declares no checks"
    failed = [c["name"] for c in checks if c["status"] == "fail"]
    unknown = [c["name"] for c in checks if c["status"] == "unknown"]
    n = len(checks)
    parts = []
    if failed:
        parts.append(f"{len(failed)} of {n} check{'s' if n != 1 else ''} failed ({', '.join(failed)})")
    if unknown:
        parts.append(f"{len(unknown)} of {n} could not be measured ({', '.join(unknown)})")
    if not parts:
        parts.append(f"all {n} checks passed" if n != 1 else "its one check passed")
    return "; ".join(parts)
