"""A plan config: several registry workflows chained into one run, as the person or the model writes it.

    plan: penguin-study                 # optional label
    steps:
      clean:
        workflow: tabular-profile
        params: {dataset_file: data/examples/tabular-penguins.csv, missing_strategy: fill_median}
      bench:
        workflow: classifier-benchmark
        params:
          dataset: {from: clean, output: cleaned}   # a declared output of another step
          label_column: species

`read_plan()` checks the shape (top-level keys, step names, each step a workflow and params) and finds
every `{from, output}` reference; `order()` puts the steps in an order where every step comes after the
steps it takes from, or names the cycle. Pure: no files, no registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from snakegate.contract.dialect import did_you_mean, format_path
from snakegate.models import GateError

PLAN_KEYS = ("plan", "steps", "invocation_id", "run_id")
STEP_KEYS = ("workflow", "version", "params")
STEP_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
REF_KEYS = {"from", "output"}


def is_plan(config: Any) -> bool:
    """A run config that holds a plan (a `steps` mapping) rather than one workflow."""
    return isinstance(config, dict) and "steps" in config and "workflow" not in config


@dataclass(frozen=True)
class Ref:
    """One `{from: STEP, output: NAME}` value: where in the consuming step's params, and what it names."""

    step: str
    parts: tuple  # below the step's params: ('dataset',) or ('samples', 0, 'reads')
    source: str
    output: str

    @property
    def path(self) -> str:
        return f"steps.{self.step}.{format_path(('params',) + self.parts)}"


@dataclass
class Step:
    name: str
    workflow: str
    version: str | None
    params: dict
    refs: list[Ref] = field(default_factory=list)


@dataclass
class PlanConfig:
    label: str | None
    steps: dict[str, Step]
    claimed_id: str | None = None
    run_id: str | None = None


def _err(path: str, code: str, message: str, hint: str | None = None, choices=None) -> GateError:
    return GateError(path=path, code=code, message=message, hint=hint, choices=choices)


def read_plan(config: dict) -> tuple[PlanConfig | None, list[GateError]]:
    """The plan in `config`, or the reasons its shape is wrong."""
    errors: list[GateError] = []
    for key in config:
        if key not in PLAN_KEYS:
            close = did_you_mean(str(key), list(PLAN_KEYS))
            errors.append(_err(str(key), "plan_shape", f"`{key}` is not a field of a plan config",
                               f"did you mean `{close}`?" if close else f"a plan has: {', '.join(PLAN_KEYS)}",
                               list(PLAN_KEYS)))
    label = config.get("plan")
    if label is not None and not isinstance(label, str):
        errors.append(_err("plan", "plan_shape", f"`plan` is a label and must be text (got {label!r})",
                           "write it as text, e.g. plan: penguin-study"))
    steps_raw = config.get("steps")
    if not isinstance(steps_raw, dict) or not steps_raw:
        errors.append(_err("steps", "plan_shape", "`steps` must be a mapping of step names to steps, with at least one",
                           "write `steps:` followed by `name: {workflow: <id>, params: {...}}` lines"))
        return None, errors
    steps: dict[str, Step] = {}
    for name, raw in steps_raw.items():
        where = f"steps.{name}"
        if not isinstance(name, str) or not STEP_NAME.match(name) or "__" in name:
            errors.append(_err(where, "plan_shape", f"step name `{name}` must be 1-32 lowercase letters, digits or "
                                                   "single underscores, starting with a letter",
                               "rename the step, e.g. `clean` or `bench_1`"))
            continue
        if not isinstance(raw, dict):
            errors.append(_err(where, "plan_shape", f"step `{name}` must be a mapping with `workflow` and `params`",
                               f"write `{name}: {{workflow: <id>, params: {{...}}}}`"))
            continue
        for key in raw:
            if key not in STEP_KEYS:
                close = did_you_mean(str(key), list(STEP_KEYS))
                errors.append(_err(f"{where}.{key}", "plan_shape", f"`{key}` is not a field of a step",
                                   f"did you mean `{close}`?" if close else f"a step has: {', '.join(STEP_KEYS)}"))
        workflow = raw.get("workflow")
        if not isinstance(workflow, str):
            errors.append(_err(f"{where}.workflow", "required" if workflow is None else "type",
                               f"step `{name}` needs `workflow`: which registry workflow it runs",
                               "add `workflow: <id>` (see `snakegate list`)"))
            continue
        version = raw.get("version")
        if version is not None and not isinstance(version, str):
            errors.append(_err(f"{where}.version", "type", f"`{where}.version` must be text (got {version!r})",
                               f'quote it: version: "{version}"'))
            continue
        params = raw.get("params") if raw.get("params") is not None else {}
        if not isinstance(params, dict):
            errors.append(_err(f"{where}.params", "type", f"`{where}.params` must be a mapping of parameter names "
                                                          f"to values (got {params!r})",
                               "write `params:` followed by indented `name: value` lines"))
            continue
        step = Step(name, workflow, version, params)
        step.refs = list(_refs(name, params, (), errors))
        steps[name] = step
    plan = PlanConfig(label, steps, config.get("invocation_id"), config.get("run_id"))
    for step in steps.values():
        for ref in step.refs:
            if ref.source == step.name:
                errors.append(_err(ref.path, "plan_self_reference",
                                   f"`{ref.path}` takes from step `{step.name}` itself: a step cannot use its own "
                                   "output", "take it from an earlier step, or give a file from the data roots"))
            elif ref.source not in steps_raw:
                close = did_you_mean(ref.source, [s for s in steps_raw if s != step.name])
                errors.append(_err(ref.path, "plan_unknown_step",
                                   f"`{ref.path}` takes from step `{ref.source}`, which the plan does not have "
                                   f"(steps: {', '.join(map(str, steps_raw))})",
                                   f"did you mean `{close}`?" if close else "name one of the plan's steps",
                                   [s for s in steps_raw if s != step.name]))
    return plan, errors


def _refs(step: str, value: Any, parts: tuple, errors: list[GateError]):
    """Every `{from, output}` value in a step's params (nested lists and mappings too)."""
    if isinstance(value, dict):
        if "from" in value or "output" in value:
            path = f"steps.{step}.{format_path(('params',) + parts)}"
            extra = sorted(set(map(str, value)) - REF_KEYS)
            if extra or not isinstance(value.get("from"), str) or not isinstance(value.get("output"), str):
                errors.append(_err(path, "plan_ambiguous_value",
                                   f"`{path}` must be either a value or `{{from: <step>, output: <name>}}`"
                                   + (f"; it also has {', '.join(extra)}" if extra else
                                      "; `from` and `output` are both names"),
                                   "write `{from: clean, output: cleaned}` alone, or give the value itself"))
                return
            yield Ref(step, parts, value["from"], value["output"])
            return
        for key, sub in value.items():
            yield from _refs(step, sub, parts + (key,), errors)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _refs(step, sub, parts + (i,), errors)


def order(plan: PlanConfig) -> tuple[list[str], list[GateError]]:
    """Steps in an order where each follows the steps it takes from (ties: as written), or the cycle."""
    needs = {name: {r.source for r in step.refs if r.source in plan.steps and r.source != name}
             for name, step in plan.steps.items()}
    done: list[str] = []
    left = list(plan.steps)
    while left:
        ready = [n for n in left if needs[n] <= set(done)]
        if not ready:
            cycle = _cycle(needs, left)
            first = plan.steps[cycle[0]]
            ref = next(r for r in first.refs if r.source == cycle[1 % len(cycle)])
            return done, [_err(ref.path, "plan_cycle",
                               "the steps take from each other in a circle: " + " -> ".join(cycle + [cycle[0]])
                               + " (each needs the next one's output first)",
                               "a step can only take from steps that do not take from it; remove one of these")]
        done.append(ready[0])
        left.remove(ready[0])
    return done, []


def _cycle(needs: dict[str, set[str]], left: list[str]) -> list[str]:
    start = left[0]
    path, node = [], start
    while node not in path:
        path.append(node)
        node = sorted(needs[node] & set(left))[0]
    return path[path.index(node):]
