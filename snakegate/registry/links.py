"""Which registry workflows fit together, from what they declare: the traversal a plan is made by.

An output of one workflow can feed an `x-artifact` param of another when the param takes the output's
type (`snakegate.contract.artifacts.takes`: the same type, or tables with the same delimiter).
`consumers()` answers "which workflows can consume this output", `producers()` "which workflows can
produce this input", both in a stable order (workflow id, then declared order; a workflow may follow
itself). Each `Link` also carries what the output declares it holds (its columns, as declared, in
words), which of the consumer's params must name one of those columns, and a column param whose
default a fixed column list lacks (that link needs the param set). Only top-level params count: a
sample sheet, or a file inside a list, cannot come from another step's output by traversal.

It proposes; it never proves: the plan gate (snakegate.plan.prove) checks a chosen link against the
real params. Pure: reads the registry's manifests and contracts (a contract is read on first use by
`Registry`), writes nothing, runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from snakegate.contract import artifacts
from snakegate.contract.outputs import placeholders
from snakegate.contract.sheets import row_schema
from snakegate.errors import UserError
from snakegate.registry.workflows import Registry, Workflow

STEP_NAME_MAX = 32  # snakegate.plan.config.STEP_NAME: 1-32 lowercase letters, digits, single underscores


@dataclass(frozen=True)
class Link:
    """One way an output of `producer` can feed param `param` of `consumer`."""

    producer: str
    output: str
    output_type: str
    consumer: str
    param: str
    param_type: str
    columns: str | None = None                # what the output declares it holds, in words; None: no declaration
    column_params: tuple[str, ...] = ()       # the consumer's params that name columns of `param`
    unmet_defaults: tuple[str, ...] = ()      # of those, the ones whose default the output's fixed columns lack
    one_file: bool = True                     # False: the output's path is a pattern (a file per value)
    when: dict | None = None                  # the producer's params under which the output exists

    def as_dict(self) -> dict:
        """The link as plain data (for an action's answer or `snakegate show --json`); unset facts left out."""
        out: dict[str, Any] = {"producer": self.producer, "output": self.output, "output_type": self.output_type,
                               "consumer": self.consumer, "param": self.param, "param_type": self.param_type}
        if self.columns is not None:
            out["columns"] = self.columns
        if self.column_params:
            out["column_params"] = list(self.column_params)
        if self.unmet_defaults:
            out["set_these"] = list(self.unmet_defaults)
        if not self.one_file:
            out["one_file"] = False
        if self.when:
            out["when"] = dict(self.when)
        return out


# ---- what a workflow takes and makes -------------------------------------------------------------
def _schema(wf: Workflow) -> dict | None:
    try:
        return wf.schema
    except UserError:  # a broken contract: the workflow takes part in no link (the registry says why elsewhere)
        return None


def inputs(schema: dict | None) -> dict[str, str]:
    """{param: artifact type} for the top-level params that take one file (sample sheets left out), in
    schema order."""
    out = {}
    for name, sub in ((schema or {}).get("properties") or {}).items():
        if isinstance(sub, dict) and isinstance(sub.get("x-artifact"), str) and row_schema(sub) is None:
            out[name] = sub["x-artifact"]
    return out


def column_params(schema: dict | None, param: str) -> list[str]:
    """The top-level params that name columns of the table `param` points to (`x-column-of` on the param,
    on its items, or on the keys of a mapping), in schema order."""
    out = []
    for name, sub in ((schema or {}).get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        aims = [sub.get("x-column-of")] + [(sub.get(k) or {}).get("x-column-of") for k in ("items", "propertyNames")
                                            if isinstance(sub.get(k), dict)]
        if param in aims:
            out.append(name)
    return out


def _spec(decl: Any) -> Any:
    return decl.columns if hasattr(decl, "columns") else (decl or {}).get("columns")


def _field(spec: Any, key: str, default: Any = None) -> Any:
    return getattr(spec, key, default) if not isinstance(spec, dict) else spec.get(key, default)


def fixed_columns(decl: Any) -> list[str] | None:
    """The columns an output declares whatever the params (a plain list, or only `fixed` and `last`); None
    when they depend on the params or the output declares none."""
    spec = _spec(decl)
    if spec is None:
        return None
    if isinstance(spec, list):
        return list(dict.fromkeys(spec))
    if any(_field(spec, k) for k in ("of", "keep", "minus", "plus")):
        return None
    return list(dict.fromkeys([*(_field(spec, "fixed") or []), *(_field(spec, "last") or [])]))


def _plus_text(plus: Any) -> list[str]:
    out = []
    for entry in [plus] if isinstance(plus, str) else plus or []:
        param = entry if isinstance(entry, str) else _field(entry, "param")
        each = [] if isinstance(entry, str) else list(_field(entry, "each") or [])
        out.append(f"each of `{param}`" if not each else
                   f"{', '.join(f'`{t}`' for t in each)} for each of `{param}`")
    return out


def columns_text(decl: Any) -> str | None:
    """What an output declares its columns are, in words ("the columns of `dataset_file`, only those in
    `columns`, in that list's order"); None when it declares none."""
    spec = _spec(decl)
    if spec is None:
        return None
    fixed = fixed_columns(decl)
    if fixed is not None:
        return ", ".join(fixed) if fixed else "no columns"
    parts = [", ".join(_field(spec, "fixed") or [])] if _field(spec, "fixed") else []
    if _field(spec, "of"):
        text = f"the columns of `{_field(spec, 'of')}`"
        if _field(spec, "keep"):
            text += f" (only those in `{_field(spec, 'keep')}` when it is given"
            text += ", in that list's order)" if _field(spec, "order") == "keep" else ")"
        if _field(spec, "minus"):
            text += f", less those in `{_field(spec, 'minus')}`"
        parts.append(text)
    parts += _plus_text(_field(spec, "plus"))
    if _field(spec, "last"):
        parts.append(", ".join(_field(spec, "last")))
    return ", then ".join(parts)


def _defaults_missing(schema: dict, names: list[str], columns: list[str] | None) -> tuple[str, ...]:
    if columns is None:
        return ()
    out = []
    for name in names:
        default = ((schema.get("properties") or {}).get(name) or {}).get("default")
        values = [default] if isinstance(default, str) else default if isinstance(default, list) else \
            list(default) if isinstance(default, dict) else []
        if any(isinstance(v, str) and v not in columns for v in values):
            out.append(name)
    return tuple(out)


def _link(producer: Workflow, output: str, consumer: Workflow, param: str) -> Link | None:
    decl = producer.manifest.outputs[output]
    schema = _schema(consumer)
    param_type = inputs(schema).get(param)
    if param_type is None or not artifacts.takes(param_type, decl.type):
        return None
    names = column_params(schema, param)
    return Link(producer.id, output, decl.type, consumer.id, param, param_type, columns_text(decl), tuple(names),
                _defaults_missing(schema, names, fixed_columns(decl)), not placeholders(decl.path),
                dict(decl.when) if decl.when else None)


# ---- the traversal -------------------------------------------------------------------------------
def links_between(producer: Workflow, consumer: Workflow) -> list[Link]:
    """Every link from an output of `producer` to a param of `consumer`: outputs in declared order, then
    params in schema order."""
    params = list(inputs(_schema(consumer)))
    return [link for output in producer.manifest.outputs for param in params
            if (link := _link(producer, output, consumer, param)) is not None]


def consumers(registry: Registry, workflow: str, output: str) -> list[Link]:
    """Which workflows can consume output `output` of `workflow` (by declared type), in id order."""
    producer = registry.get(workflow)
    if producer is None or output not in producer.manifest.outputs:
        return []
    return [link for wf_id in registry.ids() for param in inputs(_schema(registry.get(wf_id)))
            if (link := _link(producer, output, registry.get(wf_id), param)) is not None]


def producers(registry: Registry, workflow: str, param: str) -> list[Link]:
    """Which workflows can produce the file param `param` of `workflow` takes (by declared type), in id order."""
    consumer = registry.get(workflow)
    if consumer is None or param not in inputs(_schema(consumer)):
        return []
    return [link for wf_id in registry.ids() for output in registry.get(wf_id).manifest.outputs
            if (link := _link(registry.get(wf_id), output, consumer, param)) is not None]


def step_name(workflow: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A step name for a step running `workflow`: the last word of its id ("classifier-benchmark" ->
    "benchmark"), numbered when taken ("benchmark_2"); always a valid plan step name."""
    words = [w for w in re.split(r"[^a-z0-9]+", workflow.lower()) if w]
    base = next((w for w in reversed(words) if w[0].isalpha()), None) or "step"
    base = base[:STEP_NAME_MAX - 3]
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name
