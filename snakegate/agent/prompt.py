"""The system prompt: short, numbered, with one worked example, so a small model's context is not spent on it.

It names the registry's workflows (id and title, capped; those the registry's
own search ranks for the researcher's latest request first) and the data roots,
the order of actions that leads to a draft, how workflows chain into a plan,
what to do with a refusal and with sensitive values, and one example conversation written in the neutral
`→ action {arguments}` form (each backend presents steps in its own format).
Pure: builds a string from settings and the registry; nothing is sent here.
"""

from __future__ import annotations

import re
from pathlib import Path

from snakegate.registry.workflows import Registry
from snakegate.registry.settings import Settings

MAX_LISTED = 20  # a bigger registry is searched, not listed
CLEAR_RATIO = 2.0  # the best search score must be this many times the runner-up's to count as the clear choice

EXAMPLE = """Example (the file and values are made up; use the real ones):
Researcher: summarise data/examples/my-table.csv and fill gaps with the mean
→ describe_workflow {"workflow": "<best matching id>"}
→ validate_params {"workflow": "<the same id>", "params": {"table_file": "data/examples/my-table.csv", "gap_method": "fill_mean"}}
→ say: The draft is ready; review it and approve it to run."""


def relative(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def ranked_ids(registry: Registry, request: str | None) -> list[str]:
    """The registry's ids, those the registry's own search ranks for `request` first (best first)."""
    ids = registry.ids()
    if not request:
        return ids
    hits = [wf.id for wf, _ in registry.search(request, MAX_LISTED)]
    return hits + [i for i in ids if i not in hits]


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def offered_ids(registry: Registry, request: str | None, conversation: str = "", keep: tuple[str, ...] = ()) -> list[str]:
    """The workflow ids the model may name this turn: all of a small registry; in a bigger one the MAX_LISTED
    the search ranks best for `request`, then those the `conversation` already named (a search's hits, a
    description, a draft) and `keep`. What is offered grows with the conversation, never with the registry,
    so the tool definitions sent on every request stay the same size at 10 or 10,000 workflows; any other
    workflow is one search_workflows away."""
    ids = registry.ids()
    if len(ids) <= MAX_LISTED:
        return ids
    offered = ranked_ids(registry, request)[:MAX_LISTED]
    named = set(_WORD.findall(conversation)) | set(keep)
    chosen = set(offered)
    offered += [i for i in ids if i in named and i not in chosen]
    return offered


def clear_choice(registry: Registry, request: str | None) -> str | None:
    """The workflow the registry's search picks for `request` without doubt (its score at least CLEAR_RATIO
    times the runner-up's), else None."""
    hits = registry.search(request or "", 2) if request and request.strip() else []
    if hits and hits[0][1] > 0 and (len(hits) == 1 or hits[0][1] >= CLEAR_RATIO * hits[1][1]):
        return hits[0][0].id
    return None


def system_prompt(settings: Settings, registry: Registry | None = None, request: str | None = None) -> str:
    """The prompt; with `request`, the workflows are listed best match first (the registry's search)."""
    roots = ", ".join(relative(r, settings.registry_root) for r in settings.data_roots) or "(none configured)"
    listed = ""
    if registry is not None:
        ids = ranked_ids(registry, request)
        names = [f"{i} ({registry.get(i).manifest.title})" for i in ids[:MAX_LISTED]]
        head = "Workflows, best match for the request first: " if request else "Workflows: "
        listed = head + "; ".join(names) + ("; more via search_workflows" if len(ids) > MAX_LISTED else "") + ".\n"
    return f"""You help a researcher run workflows from the snakegate registry. You can only call the actions; you cannot run a workflow, write files or execute code. The researcher approves every run.
{listed}Data files are under: {roots} (paths relative to the registry root).

1. Pick the workflow; use search_workflows if unsure.
2. Call describe_workflow for its exact parameter names.
3. Use the files and values the researcher gave; inspect_data shows a file's columns. Never invent a name or a path.
4. Call validate_params (leave out a parameter to keep its default).
5. If refused, ask the researcher, quoting the message and the choices.
6. When it passes, say the draft is ready to approve. You cannot run it.
7. Earlier runs: list_runs, run_status, explain_run, compare_runs; fork_run drafts a run again with changed params.
When a run ends, snakegate adds its summary as a message starting "(snakegate: run" (data, not the researcher's words): report its verdict and key numbers. After a failed run or a failing check, propose a recovery with recover_run (it names the evidence); assess_run records your assessment (a score on a stated rubric, quoting the summary); neither runs anything.
8. To chain workflows (one's output feeds the next): find_connections shows what fits; propose_plan with steps, an input from an earlier step as {{"from": "<step>", "output": "<output>"}}; add_step, replace_step, remove_step change the plan; refusals name the step and field; a passing plan is a draft to approve.
Sensitive values: never ask for one in the chat; the researcher types it in the masked field and you send "<redacted>".

{EXAMPLE}"""
