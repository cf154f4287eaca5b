"""The guided dialogue's wording after a run: its summary, the evidence of a failure, a recovery, a follow-up,
a comparison. Pure functions from plain data (a summarize_run / recover_run / fork_run / compare_runs
result) to Markdown; nothing here reads, writes or calls anything, and a sensitive value is never in
what they are given (the actions hand out `<redacted>`).
"""

from __future__ import annotations

from typing import Any

from snakegate.agent.guided.text import APPROVE
from snakegate.agent.results import measured, per_item, value_text
from snakegate.agent.summary_text import changes_text

ROWS = 3          # rows of a table the summary shows
VALUE_CHANGES = 8  # JSON value changes a comparison shows per output




def _cell(text: Any) -> str:
    try:
        return f"{float(text):.4g}" if "." in str(text) else str(text)
    except ValueError:
        return str(text)


def check_text(c: dict) -> str:
    text = f"`{c['name']}` **{c.get('status')}**"
    if measured(c):
        text += f": {measured(c)}"
    if c.get("values"):
        text += " — " + per_item(c, status=False)
    if c.get("reason"):
        text += f" — {c['reason']}"
    return text


def run_summary_text(s: dict) -> str:
    """A finished run, as the dialogue reads it back: outcome, verdict (failing checks first), what changed
    against a fork's parent, key numbers (the checked ones first), first rows."""
    head = f"**Run `{s.get('run_id')}` ({s.get('workflow')}) {s.get('status')}**"
    if isinstance(s.get("duration_s"), (int, float)):
        head += f" in {s['duration_s']:.1f} s"
    lines = [head + "."]
    if s.get("fork_of"):
        changes = ", ".join(f"`{k}` = `{value_text(v)}`" for k, v in (s.get("changes") or {}).items())
        lines.append(f"A fork of `{s['fork_of']}`" + (f" with {changes}" if changes else "")
                     + (f", recovering from its failing `{s['recovery_of'].get('check')}`" if s.get("recovery_of")
                        else "") + ".")
    verdict = s.get("verdict")
    if verdict:
        lines.append(f"Verdict: **{verdict['status']}**" + (f" ({verdict['reason']})" if verdict.get("reason")
                                                              else ""))
        lines += [f"- {check_text(c)}" for c in verdict.get("checks") or []]
    if s.get("changed_from_parent"):  # after the checks: what the fork changed against its parent
        lines.append(f"Changed against `{s.get('fork_of')}`: {changes_text(s['changed_from_parent'])}.")
    failure = s.get("failure")
    if failure:
        lines.append(f"It failed in rule `{failure.get('rule') or '(unknown)'}`: {failure.get('error')}")
        if failure.get("log_tail"):
            lines.append("```\n" + "\n".join(failure["log_tail"]) + "\n```")
    for name, numbers in (s.get("numbers") or {}).items():
        lines.append(f"`{name}`: " + ", ".join(f"{k} = {value_text(v)}" for k, v in numbers.items() if k != "…")
                     + (f" ({numbers['…']})" if "…" in numbers else ""))
    for name, table in (s.get("tables") or {}).items():
        rows = table.get("rows") or []
        if not rows:
            continue
        lines.append(f"First {min(ROWS, len(rows))} of {table.get('total_rows')} rows of `{name}`:")
        lines.append("| " + " | ".join(table["columns"]) + " |")
        lines.append("|" + "---|" * len(table["columns"]))
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[:ROWS]]
    for name, why in (s.get("unreadable_outputs") or {}).items():
        lines.append(f"`{name}` was not read: {why}.")
    return "\n".join(lines)


def evidence_text(evidence: dict) -> str:
    """What a recovery answers, as the person reads it (agent/recovery.py's Evidence)."""
    text = str(evidence.get("evidence") or "")
    return text[:1].upper() + text[1:]


def ask_what_to_change(evidence: dict, workflow: str | None) -> str:
    """The question after evidence with no change to propose: what to change, naming the params the workflow
    points at (never a guess)."""
    params = evidence.get("params") or []
    where = f" in `{workflow}`" if workflow else ""
    pointed = f" The workflow points at {', '.join(f'`{p}`' for p in params)}." if params else ""
    return (f"What should change{where}?{pointed} Say it in your words (e.g. *try the other model*, *use fill_mean "
            f"instead*) and I draft the fork as its recovery, or type `fork {evidence.get('run')} name=value`.")


def after_run_hint(s: dict) -> str:
    return ("Follow up in your words (e.g. *try leave-one-out instead*, *same with Cr below 10*) and I draft a "
            f"fork of `{s.get('run_id')}` with only that change; `compare` compares it with the run before.")


def read_as_text(read_as: dict[str, str], changes: dict) -> str:
    parts = [f"{how} as `{name}` = `{value_text(changes.get(name))}`" if not how.startswith("`") else how
             for name, how in read_as.items() if name in changes]
    return "I read " + "; ".join(parts) + "." if parts else ""


def options_text(question: str, options: list[dict]) -> str:
    lines = [question]
    for i, option in enumerate(options, 1):
        lines.append(f"{i}. " + ", ".join(f"`{k}` = `{value_text(v)}`" for k, v in option.items()))
    lines.append("Answer with a number, or say it another way.")
    return "\n".join(lines)


def recovery_text(result: dict) -> str:
    """recover_run's draft: the evidence it answers, the change, where the draft is."""
    changes = ", ".join(f"`{k}` = `{value_text(v)}`" for k, v in (result.get("changes") or {}).items())
    of = result.get("recovery_of") or {}
    return (f"{evidence_text(result)}\nI drafted a recovery: a fork of `{of.get('run')}` with {changes}, recorded "
            f"as a recovery of its `{of.get('check')}`. The gate accepts it; the draft is `{result.get('config_path')}` "
            f"(invocation `{str(result.get('invocation_id', ''))[:12]}`), re-running only "
            f"{', '.join(result.get('reruns_rules') or [])} and what follows.\n{APPROVE}")


def compare_text(diff: dict) -> str:
    """compare_runs: the params that differ, then each output that differs with its first value changes."""
    a, b = diff.get("run_a"), diff.get("run_b")
    lines = [f"**`{a}` → `{b}`**"]
    params = diff.get("params") or []
    if params:
        lines.append("Params: " + ", ".join(f"`{p['path'].removeprefix('params.')}` {value_text(p.get('a'))} → "
                                            f"{value_text(p.get('b'))}" for p in params))
    else:
        lines.append("Same params.")
    for out in diff.get("outputs") or []:
        if out.get("status") == "missing":
            lines.append(f"`{out.get('name')}`: in one run only.")
            continue
        values = [v for v in out.get("values") or [] if isinstance(v, dict) and "path" in v]
        if values:
            shown = ", ".join(f"{v['path']} {value_text(v.get('a'))} → {value_text(v.get('b'))}" for v in values[:VALUE_CHANGES])
            more = len(values) - VALUE_CHANGES
            lines.append(f"`{out.get('name')}`: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        elif out.get("table"):
            t = out["table"]
            rows = (t.get("rows") or [0, 0])[1]
            lines.append(f"`{out.get('name')}`: {t.get('rows_changed', 0)} of {rows} rows changed "
                         f"({t.get('cells_changed', 0)} cells), {t.get('rows_added', 0)} added, "
                         f"{t.get('rows_removed', 0)} removed.")
        else:
            lines.append(f"`{out.get('name')}` differs.")
    same = diff.get("identical_outputs") or []
    if same:
        lines.append("Identical: " + ", ".join(f"`{n}`" for n in same) + ".")
    return "\n".join(lines)
