"""How drafts, actions, failures and run outcomes read on screen: pure functions returning plain strings.

Nothing here touches a widget, writes anything or calls the network, so the
wording is easy to test and the widgets stay thin. Sensitive param values
never reach a returned string: they are masked through the contract
(`x-sensitive`) before they are formatted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from snakegate.agent.redact import PLACEHOLDER, redact_params, secret_strings, sensitive_values

MASK = "••••••"
GUIDED_LABEL = "guided dialogue (offline)"


def backend_label(backend: Any) -> str:
    """The header's subtitle: which model answers, and where."""
    if getattr(backend, "name", None) == "guided":
        return GUIDED_LABEL
    where = getattr(backend, "base_url", None)
    model = getattr(backend, "model", None) or "model"
    return f"{model} @ {where}" if where else str(model)


def short_id(invocation_id: str) -> str:
    return invocation_id[:12]


def relative(path: Path | str, root: Path) -> str:
    """`path` relative to the registry root when it lies inside it (shorter, and what a user types)."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def param_lines(schema: dict | None, params: dict) -> list[tuple[str, str]]:
    """(name, shown value) per param, in the draft's order, with every `x-sensitive` value masked.

    Without a schema nothing can be proven safe to show, so every value is masked (fail closed)."""
    shown = redact_params(schema, params) if schema is not None else {k: PLACEHOLDER for k in params}
    return [(name, _value_text(value)) for name, value in shown.items()]


def secrets_in(schema: dict | None, params: dict) -> list[str]:
    """The text of every sensitive value of a draft, longest first, to mask wherever it was typed."""
    return secret_strings(sensitive_values(schema, params).values()) if schema is not None else []


def _value_text(value: Any) -> str:
    if value == PLACEHOLDER:
        return MASK
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True).replace(json.dumps(PLACEHOLDER), MASK)


def keep_line_breaks(markdown: str) -> str:
    """Markdown as chat apps show it: a single newline breaks the line. The guided dialogue (and most models)
    write one thing per line, which plain Markdown runs together into one paragraph. Two trailing spaces make
    a hard break; fenced code is left alone, and before a list or a heading they are simply dropped."""
    out, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
        else:
            out.append(line if fenced or not line.strip() else line.rstrip() + "  ")
    return "\n".join(out)


def action_note(event: Any) -> str:
    """One line per platform action the model called: a tick or a cross, the action, its summary."""
    mark = "✓" if event.ok else "✗"
    return f"{mark} {event.name}: {event.summary}"


def backend_failed_text(message: str) -> str:
    return (f"The model could not answer: {message}\n"
            "Nothing was lost. Check that the model server is running and reachable, then send again, "
            "or restart with `snakegate chat --guided` for the offline guided dialogue.")


def progress_text(done: int, total: int | None, rule: str | None) -> str:
    step = f"step {done}/{total}" if total is not None else f"step {done}"
    return f"{step} · {rule}" if rule and rule != "snakegate_all" else step


def outcome_lines(outcome: Any, root: Path) -> tuple[str, list[str]]:
    """(status, lines) for a finished run: where its outputs are and how to see its provenance,
    or for a failure the failing rule, its log and the error the run record holds."""
    rec = outcome.record
    dur = rec.get("duration_s")
    head = f"{outcome.status} · run {outcome.run_id}" + (f" · {dur:.1f} s" if isinstance(dur, (int, float)) else "")
    lines = [head]
    if outcome.status == "failed":
        if rec.get("failed_rule"):
            lines.append(f"failed rule: {rec['failed_rule']}")
        logs = rec.get("failed_log") or []
        lines.append("log: " + (", ".join(logs) if logs else "none"))
        if rec.get("error"):
            lines.append(f"error: {rec['error']}")
    elif outcome.status == "cancelled":
        lines.append("the run was cancelled; its record says how far it got")
    folder = relative(outcome.run_dir, root)
    made = [o.get("name") or o.get("path") for o in rec.get("outputs", []) if o.get("exists")]
    if made:
        lines += [f"outputs: {folder}/results/", "made: " + ", ".join(str(m) for m in made)]
    else:
        lines.append(f"run folder: {folder}/")
    lines.append(f"provenance: snakegate prov {outcome.run_id}")
    return outcome.status, lines


def refusal_lines(message: str, problems: list[str]) -> list[str]:
    """A refusal at execute time: nothing ran; say so and what to do."""
    return ["nothing was run: " + message, *[f"  - {p}" for p in problems],
            "Ask for a new draft (the files or the workflow may have changed since you approved it)."]
