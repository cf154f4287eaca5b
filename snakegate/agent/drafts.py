"""Writing a draft: the run config a Proposal describes, as the file the researcher approves.

The same proposal always gives the same bytes (so two conversations never
disagree about a file); a fork's draft names its parent run in a comment, a
plan's draft its steps and the edges between them (`plan_lines`, the words
every door shows a plan in).
The file runs unchanged with `snakegate run` or plain `snakemake
--configfile`. Sensitive values may be in it (Snakemake needs them), so every
draft is created with mode 0600 from its first byte (never chmod-ed after the
secret is on disk), under a temp name no other writer shares, then renamed into
place. Writes only the one file under the drafts folder.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.agent.actions.base import PlanOutline, Proposal
from snakegate.agent.events import Draft
from snakegate.agent.prompt import relative
from snakegate.config.write import dump_config, write_atomic


DRAFT_MODE = 0o600  # owner only, from the first byte: a draft may hold x-sensitive values in plain text

# How each door tells the person to approve a draft (the header's second line)
APPROVE_IN = {"chat": "Approve it in the chat", "mcp": "Confirm it when your MCP client asks"}


def plan_lines(plan: PlanOutline, versions: bool = True) -> list[str]:
    """A plan's steps in run order with the edges between them, one short line each (readable at 80
    columns and in a narrow panel): `clean: tabular-profile 1.0.0`, then `  dataset ← clean.cleaned`."""
    lines = []
    for step in plan.steps:
        lines.append(f"{step.name}: {step.workflow}" + (f" {step.version}" if versions else ""))
        lines += [f"  {param} ← {source}.{output}" for param, source, output in step.takes]
    return lines


def draft_title(draft) -> str:
    """How a draft is named in one line: `tabular-profile 1.0.0`, or `plan penguin-study (2 steps)`."""
    if getattr(draft, "plan", None) is not None:
        n = len(draft.plan.steps)
        return f"{draft.workflow} ({n} step{'s' if n != 1 else ''})"
    return f"{draft.workflow} {draft.version}"


def _plan_config(p: Proposal) -> dict:
    steps = {s.name: {"workflow": s.workflow, "version": s.version, "params": s.params} for s in p.plan.steps}
    return {**({"plan": p.plan.label} if p.plan.label else {}), "steps": steps, "invocation_id": p.invocation_id}


def draft_text(p: Proposal, root: Path, door: str = "chat") -> str:
    if p.plan is not None:
        config = _plan_config(p)
        text = (f"# Draft plan from snakegate {door}; it passed the gate.\n"
                f"# {APPROVE_IN[door]}, or run it yourself: snakegate run {relative(p.config_path, root)}\n"
                + "".join(f"#   {line}\n" for line in plan_lines(p.plan)))
        return text + dump_config(config)
    config = {"workflow": p.workflow, "version": p.version, "invocation_id": p.invocation_id, "params": p.params}
    text = (f"# Draft run config from snakegate {door}; it passed the gate.\n"
            f"# {APPROVE_IN[door]}, or run it yourself: snakegate run {relative(p.config_path, root)}\n")
    if p.fork is not None:
        text += (f"# A fork of run {p.fork.parent_run} ({', '.join(p.fork.changes)} changed): once approved "
                 f"it re-runs only {', '.join(p.fork.changed_rules)} and what follows.\n")
    return text + dump_config(config)


def write_draft(p: Proposal, root: Path, door: str = "chat") -> Draft:
    """Write the proposal's draft file; raises OSError/ValueError when it cannot be written."""
    text = draft_text(p, root, door)
    p.config_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p.config_path, text, mode=DRAFT_MODE)
    return Draft(workflow=p.workflow, version=p.version, invocation_id=p.invocation_id, params=p.params,
                 config_path=p.config_path, config_text=text, fork=p.fork, plan=p.plan)
