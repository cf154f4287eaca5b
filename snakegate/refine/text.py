"""How a refinement reads, the same at every door (the command line, the chat's panel and transcript, an MCP
confirmation): the whole space as a person approves it, and the table of variants with their verdicts.

Pure functions over a `space.Proposal` and a `loop.Outcome`: nothing here reads, writes or asks. Values are
shown as the approval holds them (an x-sensitive value as its keyed hash, never in clear).
"""

from __future__ import annotations

import json


def values_text(values: dict) -> str:
    return ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in values.items())


def rule_text(proposal) -> str:
    """The stop rule in words, with the check's test: `stop at the first run that passes background_uniform
    (diagnostics /background/ks_pvalue >= 0.001)`."""
    check = proposal.check
    threshold = check["threshold"]
    shown = f"param {threshold['param']}" if isinstance(threshold, dict) else f"{threshold:g}"
    test = f"{check['name']} ({check['output']} {check['measure']} {check['test']} {shown})"
    if proposal.stop.get("until"):
        return f"stop at the first run that passes {test}"
    better = "highest" if proposal.stop.get("direction") == "max" else "lowest"
    return f"run the budget and keep the {better} value of {test}"


def budget_text(proposal) -> str:
    budget = f"{proposal.budget_runs} run(s)"
    if proposal.core_hours is not None:
        budget += f" and {proposal.core_hours:g} core-hour(s) ({proposal.cores:g} core(s) per run)"
    return budget


def proposal_lines(proposal) -> list[str]:
    """The whole space as a person approves it."""
    lines = [f"refinement of run {proposal.parent.name} ({proposal.workflow}): {rule_text(proposal)}",
             (f"  budget: {budget_text(proposal)}; each run is a fork of the run before it; only "
              f"{', '.join(proposal.names)} change(s), to the values below, each point already gated"),
             f"  {len(proposal.points)} point(s):"]
    for point in proposal.points:
        marker = "" if point.n <= proposal.budget_runs else "  (beyond the budget)"
        lines.append(f"    {point.n}. {values_text(point.shown)}{marker}")
    for skipped in proposal.skipped:
        lines.append(f"    left out: {values_text(skipped['values'])} ({skipped['why']})")
    if proposal.check.get("says"):
        lines.append(f"  the check says: {proposal.check['says']}")
    return lines


def outcome_lines(proposal, outcome) -> list[str]:
    """The variants with their verdicts, and how the refinement ended."""
    name = proposal.check["name"]
    lines = [f"refinement {outcome.refinement}: {outcome.state} · {outcome.why}"]
    if not outcome.variants:
        return lines + ["  no run was started"]
    header = ["#", "run", *proposal.names, "status", "verdict", name]
    rows = [[str(v.n), v.run_id, *(json.dumps(v.values.get(n), default=str) for n in proposal.names), v.status,
             v.verdict, f"{v.check_status} ({number_text(v.check_value)})"] for v in outcome.variants]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    if outcome.best is not None and proposal.stop.get("best"):
        lines.append(f"  best: run {outcome.best.run_id} ({name} = {number_text(outcome.best.check_value)})")
    return lines


def number_text(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "n/a" if value is None else str(value)
