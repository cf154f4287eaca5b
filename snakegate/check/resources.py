"""Proof: the per-rule resources of workflow.yaml (`rules.<rule>.resources`) give every run a usable value.

A value is a whole number, or `{param, times, plus}` (see snakegate.contract.resources). A param reference must
name a declared top-level param that is a number, always has a value (required, or a default) and whose
schema minimum keeps the resource at 1 or more; every example must resolve to whole numbers >= 1. Where
the rule's Snakefile sets the same resource itself (`threads:`, `resources:`) to something else, a
warning says the contract's value is what snakegate runs and a standalone run gets the Snakefile's.

Pure: facts in, findings out.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath

from snakegate.check.facts import Finding, WorkflowFacts, properties
from snakegate.contract.dialect import did_you_mean
from snakegate.contract.resources import NAMES, ResourceError, value_of

FIX = "see `resources` in workflows/CONTRIBUTING.md"


def _numeric(sub: dict) -> bool:
    kinds = sub.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return bool(kinds) and all(k in ("integer", "number") for k in kinds)


def _lowest(sub: dict) -> float | None:
    low = sub.get("minimum")
    exclusive = sub.get("exclusiveMinimum")
    if isinstance(exclusive, (int, float)) and not isinstance(exclusive, bool):
        # the smallest value above an exclusive bound: the next integer for an integer param
        bound = exclusive + 1 if sub.get("type") == "integer" else exclusive
        low = bound if low is None else max(low, bound)
    return low if isinstance(low, (int, float)) and not isinstance(low, bool) else None


def _param_problem(f: WorkflowFacts, rule: str, name: str, spec: dict) -> str | None:
    props = properties(f.schema)
    param = spec["param"]
    sub = props.get(param)
    if not isinstance(sub, dict):
        close = did_you_mean(param, list(props))
        return (f"names param `{param}`, which schema.json does not declare"
                + (f" (did you mean `{close}`?)" if close else ""))
    if not _numeric(sub):
        return f"follows param `{param}`, which is {sub.get('type') or 'untyped'}, not a number"
    if param not in (f.schema.get("required") or []) and "default" not in sub:
        return (f"follows param `{param}`, which a run config may leave out (it is not required and has no "
                "default), and then the rule has no value")
    low = _lowest(sub)
    times, plus = spec.get("times", 1), spec.get("plus", 0)
    if low is None:
        return (f"follows param `{param}`, whose schema has no minimum, so the {name} could come to 0 or less; "
                f"give `{param}` a minimum")
    if math.ceil(low * times + plus) < 1:
        return f"comes to {math.ceil(low * times + plus)} with param `{param}` at its minimum {low}; it must be at least 1"
    return None


def _agrees(spec, written: str) -> bool:
    """Does the Snakefile's own expression say what the contract declares (a literal, or config["param"])?"""
    compact = written.replace(" ", "")
    if isinstance(spec, int):
        return compact == str(spec)
    if isinstance(spec, dict) and spec.get("times", 1) == 1 and spec.get("plus", 0) == 0:
        p = re.escape(spec["param"])
        return re.fullmatch(rf"config(\[['\"]{p}['\"]\]|\.get\(['\"]{p}['\"](,.*)?\))", compact) is not None
    return False


def _shown(spec) -> str:
    if isinstance(spec, dict):
        extra = "".join(f", {k}: {spec[k]}" for k in ("times", "plus") if k in spec)
        return f"{{param: {spec['param']}{extra}}}"
    return str(spec)


def resource_findings(f: WorkflowFacts) -> list[Finding]:
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    manifest_file = f"{f.rel}/workflow.yaml"
    out = []
    for rule, io in sorted((f.manifest.get("rules") or {}).items()):
        declared = (io or {}).get("resources") or {}
        src = f.source.rule(rule) if f.source else None
        for name, spec in sorted(declared.items()):
            where = f"rules.{rule}.resources.{name}"
            problem = _param_problem(f, rule, name, spec) if isinstance(spec, dict) else None
            if problem:
                out.append(Finding("error", f.id, "resource_invalid", f"{where} {problem}", rule=rule,
                                   file=manifest_file, hint=FIX))
                continue
            for ex in f.examples:
                if ex.resolved_params is None:
                    continue
                try:
                    value_of(spec, ex.resolved_params)
                except ResourceError as exc:
                    out.append(Finding("error", f.id, "resource_invalid",
                                       f"{where}: {exc} (with {PurePosixPath(ex.name).name})", rule=rule,
                                       file=manifest_file, hint=FIX))
            written = (src.threads if name == "threads" else src.resources.get(name)) if src else None
            if written is not None and not _agrees(spec, written):
                directive = "threads:" if name == "threads" else f"resources: {name}="
                out.append(Finding("warning", f.id, "resource_differs",
                                   f"rule `{rule}` sets {directive} {written} in its Snakefile, but workflow.yaml "
                                   f"declares {name}: {_shown(spec)}; runs through snakegate get the contract's "
                                   "value, a standalone run the Snakefile's", rule=rule, file=manifest_file,
                                   hint=f"make them say the same (in the Snakefile: {directive} "
                                        + (f"config[\"{spec['param']}\"]" if isinstance(spec, dict) else str(spec))
                                        + ")"))
    return out


__all__ = ["NAMES", "resource_findings"]
