"""How a bounded refinement reads in the chat: its points as they run, and its table of variants at the end.

Pure functions over plain data (the loop's event facts, a loop.Outcome and its table as
snakegate.refine.text words it): nothing here touches a widget, reads a file or runs anything. Values are
shown as the approval holds them (an x-sensitive value as its keyed hash).
"""

from __future__ import annotations

from snakegate.tui.present_runs import STATUS_MARK

CANCEL_HINT = "ctrl+c cancels this point; no other starts"
ENDED_OK = ("reached", "best")   # how a refinement ends when its stop rule found what it looked for


def values_text(values: dict) -> str:
    from snakegate.refine.text import values_text as text  # one wording for every door

    return text(values)


def point_title(facts: dict) -> str:
    return f"Refinement · point {facts.get('n')}/{facts.get('points')}"


def point_lines(facts: dict) -> list[str]:
    return [values_text(facts.get("values") or {}), f"fork of {facts.get('predecessor')}", "starting Snakemake…",
            CANCEL_HINT]


def started_note(approved_by: str, refinement) -> str:
    p = refinement.proposal
    return (f"▶ approved by {approved_by}: a refinement of run {p.parent.name} ({len(p.points)} point(s), at most "
            f"{p.budget_runs} run(s))")


def variant_note(row: dict, check: str) -> str:
    """'✓ point 2: run … succeeded · background_uniform pass (0.128)' for one finished variant."""
    measured = row.get("check") or {}
    value = measured.get("value")
    shown = f"{value:.4g}" if isinstance(value, float) else ("n/a" if value is None else str(value))
    return (f"{STATUS_MARK.get(str(row.get('status')), '·')} point {row.get('n')}: run {row.get('run_id')} "
            f"{row.get('status')} · {check} {measured.get('status')} ({shown})")


def outcome_markdown(lines: list[str]) -> str:
    """The table of variants for the transcript: its first line as the heading, the table as it prints."""
    head, *table = lines
    return f"**{head}**\n\n```\n" + "\n".join(line.removeprefix("  ") for line in table) + "\n```"


def panel_status(state: str) -> str:
    """The run panel's class for how a refinement ended (its colours)."""
    return "succeeded" if state in ENDED_OK else "cancelled" if state == "cancelled" else "failed"
