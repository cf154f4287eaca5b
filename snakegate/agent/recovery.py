"""What went wrong in a run, as evidence a recovery can name: pure functions over a run's summary.

`evidence(summary)` turns a run summary (agent/results.py) into one `Evidence` per failing check (its
value, the test and threshold it missed, what the workflow says failing means, the params it names, and
what the run itself suggests for them) and one for a failed run (the failing rule and its real error).
`addressed(summary, check, changes)` picks the evidence a recovery answers: the check named, else the
first failing check that names a changed param, else the first failing check, else the failure.
A recovery is a fork of the run recorded as `recovery_of: {run, check}` (`check` is a check's name, or
FAILURE for a run that failed); proposing one is the agent's, approving it the person's.
Nothing here reads, writes or runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from snakegate.agent.summary_text import measured, value_text

FAILURE = "failure"   # `recovery_of.check` of a recovery from a failed run rather than a failing check


@dataclass(frozen=True)
class Evidence:
    """Why a run needs a recovery, in words and as data."""

    run_id: str
    check: str                                   # a failing check's name, or FAILURE
    text: str                                    # one paragraph naming the evidence
    params: tuple[str, ...] = ()                 # the params the workflow says to look at
    suggested: dict[str, Any] = field(default_factory=dict)   # param -> the value the run itself suggests

    def as_json(self) -> dict:
        return {"run": self.run_id, "check": self.check, "evidence": self.text, "params": list(self.params),
                "suggested": dict(self.suggested)}


def _check_text(check: dict) -> str:
    text = f"check `{check['name']}` failed" + (f": its value is {measured(check)}" if measured(check) else "") + "."
    if check.get("says"):
        text += f" The workflow says: {check['says']}"
    return text


def evidence(summary: dict) -> list[Evidence]:
    """One Evidence per failing check of the run, then one for its failure (a failed run); [] when it
    passed (an `unknown` check is no evidence of anything: it could not be measured)."""
    run_id = str(summary.get("run_id"))
    suggestions = [s for s in summary.get("suggestions") or [] if isinstance(s, dict)]
    out = []
    for check in (summary.get("verdict") or {}).get("checks") or []:
        if check.get("status") != "fail":
            continue
        suggested = {s["param"]: s["value"] for s in suggestions if s.get("check") == check["name"]}
        text = _check_text(check)
        for param, value in suggested.items():
            source = next((s.get("from") for s in suggestions if s.get("param") == param), None)
            text += f" The run suggests `{param}` = {value_text(value)}" + (f" ({source})." if source else ".")
        out.append(Evidence(run_id, check["name"], text, tuple(check.get("params") or ()), suggested))
    failure = summary.get("failure")
    if summary.get("status") == "failed" and isinstance(failure, dict):
        text = f"the run failed in rule `{failure.get('rule') or '(unknown)'}`: {failure.get('error')}"
        tail = failure.get("log_tail") or []
        if tail:
            text += f" (its log ends: {tail[-1]})"
        out.append(Evidence(run_id, FAILURE, text))
    return out


def addressed(summary: dict, check: str | None, changes: dict | None) -> Evidence | None:
    """The evidence a recovery with `changes` answers (see the module's docstring); None when there is none
    (the run passed), or when `check` names no failing check of the run."""
    found = evidence(summary)
    if check:
        return next((e for e in found if e.check == check), None)
    changed = {str(name).split(".")[0] for name in (changes or {})}
    return next((e for e in found if changed & {p.split(".")[0] for p in e.params}), None) or \
        next(iter(found), None)
