"""The edge of the faithfulness check: reads what faithful.py compares for one draft, and returns its sentences.

`draft_differences()` lists the data roots' files and reads the header row of
each table the draft itself reads that a column param refers to (the gate read
the same rows), then hands plain data to faithful.differences. The chat's
controller and the MCP server both call it with the researcher's words they
hold. A fork (its changes are stated in their own terms) and a plan are not
compared. It never writes, never changes the draft, and never decides whether
it may run.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.agent import faithful
from snakegate.agent.actions.data import data_files
from snakegate.agent.actions.registry import param_table
from snakegate.contract import artifacts


def draft_differences(registry, settings, draft, text: str) -> tuple[str, ...]:
    """What `text` (the researcher's words) states that the one-workflow `draft` does not hold, one sentence
    each; () for a faithful draft, a fork, a plan, or no words."""
    wf = registry.get(draft.workflow) if draft.plan is None and draft.fork is None and text.strip() else None
    if wf is None:
        return ()
    params = param_table(wf.schema)
    files = [e["path"] for e in data_files(settings)]
    return tuple(d.says for d in faithful.differences(text, params, draft.params,
                                                      _headers(settings.registry_root, params, draft.params), files))


def _headers(root: Path, params: list[dict], values: dict) -> dict[str, list[str]]:
    """The columns of each table the draft reads that a column param refers to."""
    out = {}
    kinds = {p["name"]: p.get("artifact") for p in params}
    for table in {p["column_of"] for p in params if isinstance(p.get("column_of"), str)}:
        kind, value = kinds.get(table), values.get(table)
        if not isinstance(value, str) or not isinstance(kind, str) or not artifacts.is_table(kind):
            continue
        path = Path(value) if Path(value).is_absolute() else root / value
        out[table] = artifacts.header(path, kind) or []  # its delimiter and encoding, as the gate reads it
    return out
