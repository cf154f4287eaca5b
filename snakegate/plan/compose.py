"""A plan as one Snakemake workflow: each step a Snakemake `module` under its own prefix, its rules taken
with `use rule * ... as wf_<step>__*`, so Snakemake's own scheduler runs the whole plan as one DAG
(independent steps in parallel, any executor, the cluster profile unchanged).

`modules()` says, as plain data, what each step's module gets: its Snakefile (the run's copy), its
params (input paths: the staged copies; an input from another step: the path that step's output will
have), its prefix (`<run>/steps/<step>`) and which params name another step's output. `declare()` turns
that into Snakemake's module and use-rule calls inside a Snakefile (the registry's top-level Snakefile
for a run, `composer.smk` for the plan gate's DAG step). An input from another step is flagged so that
Snakemake does not put the consuming module's prefix in front of it (it already names the producing
step's prefixed output, which is how Snakemake joins the two into one DAG).

`declare()` runs inside Snakemake; the rest is pure.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from snakegate.contract.outputs import expand_outputs

STEPS_DIR = "steps"
RULE_PREFIX = "wf_"
COMPOSER = Path(__file__).with_name("composer.smk")


def rule_prefix(step: str) -> str:
    """The prefix of a step's rules: wf_<step>__ (so `wf_` still marks every rule of a workflow)."""
    return f"{RULE_PREFIX}{step}__"


def step_prefix(run_prefix: str, step: str) -> str:
    return f"{run_prefix}/{STEPS_DIR}/{step}" if run_prefix else f"{STEPS_DIR}/{step}"


def _set(obj: Any, parts, value: Any) -> None:
    for p in parts[:-1]:
        obj = obj[p]
    obj[parts[-1]] = value


def output_path(workflow, params: dict, output: str) -> str:
    """The one path (below the step's prefix) of a declared output for these params."""
    (path,) = [p for name, p, _t in expand_outputs({output: workflow.manifest.outputs[output]}, params,
                                                       workflow.schema) if name == output]
    return path


def modules(order: list[str], workflows: dict, params: dict[str, dict], refs: dict[str, list],
            run_prefix: str) -> list[dict]:
    """What each step's module gets, in plan order: {name, snakefile, prefix, rule_prefix, params, upstream}.

    `workflows[step]` is the step's Workflow (the run's copy when there is one), `params[step]` its params
    as Snakemake is to get them (inputs from other steps still to fill in), `refs[step]` its Refs."""
    out, prefixes = [], {name: step_prefix(run_prefix, name) for name in order}
    for name in order:
        step_params = copy.deepcopy(params[name])
        upstream = []
        for ref in refs.get(name, []):
            source = workflows[ref.source]
            path = output_path(source, params[ref.source], ref.output)
            _set(step_params, ref.parts, f"{prefixes[ref.source]}/{path}")
            upstream.append(list(ref.parts))
        out.append({"name": name, "snakefile": str(workflows[name].snakefile), "prefix": prefixes[name],
                    "rule_prefix": rule_prefix(name), "params": step_params, "upstream": upstream})
    return out


def targets(order: list[str], workflows: dict, params: dict[str, dict], run_prefix: str) -> list[str]:
    """Every step's declared outputs, as Snakemake names them (the plan run builds them all)."""
    out = []
    for name in order:
        wf = workflows[name]
        for _out, path, _type in expand_outputs(wf.manifest.outputs, params[name], wf.schema):
            out.append(f"{step_prefix(run_prefix, name)}/{path}")
    return out


def declare(workflow, steps: list[dict]) -> None:
    """Inside a Snakefile: each step as a module, its rules as wf_<step>__<rule> (Snakemake's own
    `module` / `use rule * from ... as ...`, written as the calls the Snakefile parser makes of them)."""
    from snakemake.io import flag

    for step in steps:
        config = copy.deepcopy(step["params"])
        for parts in step["upstream"]:
            node = config
            for p in parts[:-1]:
                node = node[p]
            # already the producing step's prefixed path: no second prefix (Snakemake's own flag for that)
            node[parts[-1]] = flag(node[parts[-1]], "path_modified")
        name = f"snakegate_{step['name']}"
        workflow.module(name=name, snakefile=step["snakefile"], config=config, prefix=step["prefix"])
        workflow.userule(rules=["*"], from_module=name, exclude_rules=None,
                         name_modifier=f"{step['rule_prefix']}*", lineno=1)(lambda: None)


def plan_dag(result, registry, settings):
    """The whole plan's DAG as Snakemake builds it (in the sandbox, snakegate.gate.dag); DagError."""
    from snakegate.gate.dag import build_dag
    from snakegate.gate.sheet_paths import with_absolute_paths

    workflows = {name: registry.get(r.workflow) for name, r in result.steps.items()}
    params = {name: with_absolute_paths(workflows[name].schema, r.resolved_params, settings.registry_root)
              for name, r in result.steps.items()}
    steps = modules(result.order, workflows, params, result.refs, "")
    return build_dag(COMPOSER, {"snakegate_steps": steps,
                                "snakegate_targets": targets(result.order, workflows, params, "")})


def dag_problem(result, registry, settings):
    """The plan gate's DAG step: Snakemake builds the whole plan's DAG (in the sandbox), or the GateError
    that says why it cannot."""
    from snakegate.gate.dag import DagError
    from snakegate.models import GateError

    try:
        plan_dag(result, registry, settings)
    except DagError as exc:
        return GateError(path="steps", code="dag",
                         message=f"Snakemake cannot build the jobs of this plan: {exc.message}",
                         hint="the steps pass their contracts but do not fit together as Snakemake runs them; "
                              "see the steps' SKILL.md")
    return None
