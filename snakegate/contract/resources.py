"""Per-rule resources from the contract (workflow.yaml `rules.<rule>.resources`) onto Snakemake's rules.

A workflow declares what each rule needs, so a scheduler gets it without the user
writing it:

    rules:
      align:
        resources:
          threads: {param: threads}                       # the value of a param
          mem_mb: {param: threads, times: 800, plus: 2000}  # 2000 + 800 per thread
          runtime: 60                                     # minutes

`resolve()` turns the declaration and a run's resolved params into integers;
`apply()` sets them on the included workflow's rules (`wf_<rule>`) right after
the top-level Snakefile's `use rule *`, as if the rule had said `threads:` and
`resources:` itself, so they reach Snakemake's scheduler, the Slurm executor
(`--cpus-per-task`, `--mem`, `--time`) and every job. What the user sets on the
command line or in a profile (`--set-threads`, `--set-resources`) still wins;
`--default-resources` stays the fallback for what a rule does not declare.

Plain Python only (no jsonschema, no pydantic): it runs inside every cluster job.
`snakegate check` proves a declaration (snakegate.check.resources); `resolve()`
re-checks each value and raises ResourceError rather than hand Snakemake a bad one.
"""

from __future__ import annotations

import math
from typing import Any

NAMES = ("threads", "mem_mb", "runtime")
UNITS = {"threads": "threads", "mem_mb": "MB", "runtime": "minutes"}


class ResourceError(ValueError):
    """A declared resource that does not give a whole number >= 1 for these params."""


def value_of(spec: Any, params: dict) -> int:
    """One declared value: an integer, or {param, times?, plus?} -> ceil(params[param] * times + plus)."""
    if isinstance(spec, bool):
        raise ResourceError(f"{spec!r} is not a number")
    if isinstance(spec, int):
        value = spec
    elif isinstance(spec, dict) and isinstance(spec.get("param"), str):
        name = spec["param"]
        if name not in params:
            raise ResourceError(f"param `{name}` has no value in this run")
        raw = params[name]
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ResourceError(f"param `{name}` is {raw!r}, not a number")
        times, plus = spec.get("times", 1), spec.get("plus", 0)
        value = math.ceil(raw * times + plus)
    else:
        raise ResourceError(f"{spec!r} is neither an integer nor {{param: <name>}}")
    if value < 1:
        raise ResourceError(f"it comes to {value}, and a resource must be at least 1")
    return value


def resolve(rules: dict | None, params: dict) -> dict[str, dict[str, int]]:
    """{rule: {resource: value}} for every rule of the manifest's `rules:` that declares resources."""
    out: dict[str, dict[str, int]] = {}
    for rule, io in (rules or {}).items():
        declared = (io or {}).get("resources") if isinstance(io, dict) else None
        if not declared:
            continue
        values = {}
        for name, spec in declared.items():
            if name not in NAMES:
                raise ResourceError(f"rules.{rule}.resources.{name}: not one of {', '.join(NAMES)}")
            try:
                values[name] = value_of(spec, params)
            except ResourceError as exc:
                raise ResourceError(f"rules.{rule}.resources.{name}: {exc}") from None
        out[rule] = values
    return out


def apply(workflow, resolved: dict[str, dict[str, int]], prefix: str) -> None:
    """Set the resolved resources on Snakemake's rules `<prefix><rule>`; the user's --set-threads and
    --set-resources (Snakemake's own parsed overrides) are applied again on top, so they keep winning."""
    settings = workflow.resource_settings
    threads_over = getattr(settings, "_parsed_overwrite_threads", None) or {}
    resources_over = getattr(settings, "_parsed_overwrite_resources", None) or {}
    for rule, values in resolved.items():
        name = prefix + rule
        try:
            target = workflow.get_rule(name)
        except Exception:  # noqa: BLE001 - snakegate check reports a resource on a rule the Snakefile lacks
            continue
        if "threads" in values and name not in threads_over:
            target.resources["_cores"] = values["threads"]
        sized = {k: v for k, v in values.items() if k != "threads"}
        if sized:
            target.resources.update(sized)
            target.resources.update(resources_over.get(name, {}))
