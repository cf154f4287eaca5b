"""The edge of the faithfulness check and the prefill: reads the data that faithful.py and prefill.py compare.

`draft_differences()` lists the data roots' files and reads the header row of
each table the draft itself reads that a column param refers to (the gate read
the same rows), then hands plain data to faithful.differences. The chat's
controller and the MCP server both call it with the researcher's words they
hold. A fork (its changes are stated in their own terms) and a plan are not
compared. `request_shape()` reads, for one workflow being filled, which data
files fit each file param, the header of the table each table param reads now
(only a file in the data roots: a path a model made up is never opened), and
what the researcher stated (prefill.py): the controller's constrained schema
and prefill start from it. It never writes, never changes the draft, and never
decides whether it may run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.agent import faithful, prefill
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


@dataclass(frozen=True)
class RequestShape:
    """One workflow against the data and the researcher's words: `prefill` {param: value they stated},
    `headers` {table param: its chosen file's columns}, `candidates` {file param: the data files that fit}."""

    prefill: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, list[str]] = field(default_factory=dict)
    candidates: dict[str, list[str]] = field(default_factory=dict)


def request_shape(settings, schema: dict, text: str, *tried: dict) -> RequestShape:
    """The shape of `schema`'s workflow for the researcher's words `text`; `tried` are {param: value} dicts a
    table may have been chosen in, most trusted first (the draft's params, the model's last try)."""
    params = param_table(schema)
    files = [e["path"] for e in data_files(settings)]
    fitting = prefill.candidates(params, files)
    only = {t: fitting[t][0] for t in prefill.table_params(params)
            if len(fitting.get(t) or []) == 1 and prefill.fits(fitting[t][0], _kind(params, t))}
    chosen = prefill.chosen_tables(params, prefill.stated_files(text, params, files), *tried, only)
    # only a table in the data roots is opened: a model's path to anywhere else is never read (the gate says)
    chosen = {t: f for t, f in chosen.items() if f in files}
    headers = {t: h for t, h in _headers(settings.registry_root, params, chosen).items() if h}
    return RequestShape(prefill.prefilled(text, params, headers, files) if text.strip() else {}, headers, fitting)


def _kind(params: list[dict], name: str) -> Any:
    return next((p.get("artifact") for p in params if p["name"] == name), None)


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
