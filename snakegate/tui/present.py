"""How drafts, actions and the conversation read on screen: pure functions returning plain strings.

Nothing here touches a widget, writes anything or calls the network, so the
wording is easy to test and the widgets stay thin. Sensitive param values
never reach a returned string: they are masked through the contract
(`x-sensitive`) before they are formatted. A plan draft reads as its steps and
the edges between them (`plan_summary`, `plan_param_rows`). Runs are worded in present_runs.py.
(The redaction helpers are imported when first needed: the first screen
paints before the registry and its schema libraries are loaded.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MASK = "••••••"
PLACEHOLDER = "<redacted>"  # the agent's placeholder (snakegate.agent.redact.PLACEHOLDER; a test keeps them equal)
GUIDED_LABEL = "guided dialogue (offline)"
LOADING = "loading the registry…"
SHELL_MARK = "⚠ reaches a shell command unquoted: the shell would run what follows ; | & $ or `"

# What the draft panel's first line says, per state of the draft on screen.
DRAFT_STATUS = {
    "none": "No draft yet",
    "ready": "● Ready · ctrl+r runs it",
    "differs": "▲ Differs from your request · read why below; ctrl+r runs it as drafted",
    "pending": "○ Passed the gate · ctrl+r once the answer ends",
    "running": "▶ Running · approved by {who}",
    "used": "◆ Used · its run {status}",
    "withdrawn": "Withdrawn · {reason}",
    "refined": "◆ Ran · refinement {ended}",
}


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


def param_lines(schema: dict | None, params: dict, exposed: frozenset[str] = frozenset(),
                roots: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(name, shown value) per param, in the draft's order, with every `x-sensitive` value masked.

    Without a schema nothing can be proven safe to show, so every value is masked (fail closed). A param in
    `exposed` (its free text reaches a shell command unquoted, `snakegate.check.shellquote`) whose value holds
    a character a shell interprets is marked with SHELL_MARK. An absolute path inside one of `roots` (the
    registry root, as given and resolved) is shown relative to it, as the person typed it: a fork's draft
    holds its parent's resolved paths, and reads as its parent's draft did (`registry_relative`)."""
    from snakegate.agent.redact import redact_params
    from snakegate.check.shellquote import unsafe_for_shell

    shown = redact_params(schema, params) if schema is not None else {k: PLACEHOLDER for k in params}
    shown = {name: registry_relative(value, roots) for name, value in shown.items()}
    return [(name, _value_text(value) + (f"  {SHELL_MARK}" if name in exposed and unsafe_for_shell(params.get(name))
                                         else "")) for name, value in shown.items()]


def registry_relative(value: Any, roots: tuple[str, ...]) -> Any:
    """`value` with every string that is an absolute path inside one of `roots` written relative to it (the
    gate resolves a relative path against the registry root, so both name the same file). Pure: no file is
    looked at."""
    if isinstance(value, dict):
        return {k: registry_relative(v, roots) for k, v in value.items()}
    if isinstance(value, list):
        return [registry_relative(v, roots) for v in value]
    if isinstance(value, str) and roots and os.path.isabs(value):
        path = os.path.normpath(value)
        for root in roots:
            base = os.path.normpath(root)
            if path.startswith(base.rstrip(os.sep) + os.sep):
                return path[len(base.rstrip(os.sep)) + 1:]
    return value


def plan_summary(draft) -> str:
    """A plan draft's first lines on the panel (they stay in view at 80x24): its title and step count, the
    invocation, then each step's workflow and every edge, `param ← step.output` (short enough for the
    panel's narrowest width; versions and values follow in the params below)."""
    from snakegate.agent.drafts import plan_lines

    n = len(draft.plan.steps)
    head = f"{draft.workflow} · {n} step{'s' if n != 1 else ''}\ninvocation {short_id(draft.invocation_id)}"
    return "\n".join([head, *plan_lines(draft.plan, versions=False)])


def plan_param_rows(plan, schema_of, exposed_of=lambda wf_id, schema: frozenset(),
                    roots: tuple[str, ...] = ()) -> list[tuple[str, str, bool]]:
    """(name, shown value, is a step's heading) for every step of a plan and each of its params, in run
    order: a value taken from another step as `← step.output`, every `x-sensitive` value masked (all of a
    step's values when its workflow's contract cannot be read: fail closed), a value reaching a shell
    command unquoted marked as in param_lines, a path inside `roots` relative to it."""
    rows = []
    for step in plan.steps:
        rows.append((step.name, f"{step.workflow} {step.version}", True))
        schema = schema_of(step.workflow)
        edges = {param: f"← {source}.{output}" for param, source, output in step.takes}
        shown = param_lines(schema, {k: v for k, v in step.params.items() if k not in edges},
                            exposed_of(step.workflow, schema), roots)
        values = dict(shown)
        rows += [(f"  {name}", edges[name] if name in edges else values[name], False) for name in step.params
                 if name in edges or name in values]
    return rows


def draft_secrets(draft, schema_of) -> list[str]:
    """The text of every sensitive value of a draft (each step's, for a plan), longest first."""
    if getattr(draft, "plan", None) is None:
        return secrets_in(schema_of(draft.workflow), draft.params)
    from snakegate.agent.redact import secret_strings

    found = [v for step in draft.plan.steps for v in secrets_in(schema_of(step.workflow), step.params)]
    return secret_strings(found)


def secrets_in(schema: dict | None, params: dict) -> list[str]:
    """The text of every sensitive value of a draft, longest first, to mask wherever it was typed."""
    from snakegate.agent.redact import secret_strings, sensitive_values

    return secret_strings(sensitive_values(schema, params).values()) if schema is not None else []


def fork_note(draft, schema: dict | None) -> str | None:
    """'fork of RUN: name → value' for a fork_run draft ('recovery of RUN's failing CHECK: …' for a
    recover_run draft; sensitive values masked), else None."""
    fork = getattr(draft, "fork", None)
    if fork is None:
        return None
    from snakegate.agent.redact import sensitive_params

    hidden = {".".join(parts) for parts in sensitive_params(schema)} if schema is not None else None

    def secret(name: str) -> bool:  # the param itself, something inside it, or something it is inside
        return hidden is None or any(name == h or h.startswith(name + ".") or name.startswith(h + ".")
                                     for h in hidden)

    changes = ", ".join(f"{name} → {MASK if secret(name) else _value_text(value)}"
                        for name, value in (fork.changes or {}).items())
    recovery = getattr(fork, "recovery_of", None)
    kind = f"recovery of {fork.parent_run}'s failing {recovery.get('check')}" if recovery else f"fork of {fork.parent_run}"
    return kind + (f": {changes}" if changes else "")


def approver_text(who: str, asks: bool = False) -> str:
    """The line under the approve button: whose approval ctrl+r records and the key that changes it; when the
    name is only the machine's (git's user.name, the login name), that the first ctrl+r asks first."""
    return f"approver: {who} (ctrl+t)" + ("\n(machine's name: ctrl+r asks)" if asks else "")


def approver_question(who: str, *, first_run: bool) -> str:
    """The dialog that sets the approver (ctrl+t, or before the first run when the name is only the machine's)."""
    why = (f"Before the first run: who approves it? {who} is only this machine's name (git or login). "
           if first_run else "Who approves runs? ")
    return (why + "The name is recorded in each run's provenance and remembered for this registry "
            "(Enter keeps it, Esc cancels).")


APPROVER_UNSET = "Not approved: say who approves first (ctrl+r asks again, ctrl+t sets the name)."


def draft_status(state: str, **facts: str) -> str:
    return DRAFT_STATUS[state].format(**facts)


def differences_text(differences) -> str:
    """What a draft did not take from the request, as the panel shows it above the approve button."""
    if not differences:
        return ""
    return "Not what you asked:\n" + "\n".join(f"• {d}" for d in differences)


def draft_note(draft) -> tuple[str, bool]:
    """The transcript's line when a draft passed the gate, and whether it is a plain success."""
    head = f"{draft.workflow} {draft.version} ({short_id(draft.invocation_id)})"
    if getattr(draft, "differences", ()):
        return (f"→ draft {head} passed the gate but differs from your request: "
                + "; ".join(draft.differences) + ". Review it on the right before approving", False)
    return f"→ draft ready: {head}; review it on the right, then approve", True


def not_approvable(*, loading: bool, thinking: bool, running: bool, withdrawn: str | None) -> str:
    """Why ctrl+r cannot approve anything now, as the panel says it."""
    if loading:
        return "Nothing to approve yet: the registry is still loading."
    if running:
        return "A run is going: wait for it to end (ctrl+c cancels it)."
    if thinking:
        return "Wait: the model is still answering, and the draft may change."
    if withdrawn:
        return f"Nothing to approve: the draft was withdrawn ({withdrawn}). Ask for a new one."
    return "Nothing to approve yet: no draft has passed the gate. Describe what you want to run."


def repeat_question(draft, run_id: str, status: str) -> str:
    return (f"This draft ({draft.workflow}, invocation {short_id(draft.invocation_id)}) already ran as run "
            f"{run_id} ({status}). Run it again as a repeat, in a new run folder?")


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


def backend_failed_text(message: str, reached: bool | None = None) -> str:
    """The notice of a failed model turn. `reached` (the server answered, with an error or a cut reply): it is
    running, so the notice does not tell the researcher to check that it is."""
    retry = "Send again" if reached else "Check that the model server is running and reachable, then send again"
    return (f"The model could not answer: {message}\n"
            f"Nothing was lost: your message is back in the input. {retry}, or "
            "restart with `snakegate chat --guided` for the offline guided dialogue.")
