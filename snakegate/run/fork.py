"""Planning a fork: an earlier run's invocation with named params changed, gated, and what it must re-run.

Shared by `snakegate fork` and the chat's `fork_run` action. `parent_invocation`
reads the run config a run was started with; `plan_fork` applies the changes,
gates the new invocation and compares the two DAGs to name the rules whose
jobs change (those and their downstream jobs re-run; the rest is copied from
the parent). It never runs anything and never writes a file: the caller
decides whether to run the plan (the CLI at once, the chat after approval).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snakegate.gate.dag import DagError, build_dag
from snakegate.errors import ExitCode, UserError
from snakegate.gate.prove import gate
from snakegate.models import GateResult
from snakegate.run.pinning import PinError, registry_of_run
from snakegate.provenance import compare, runstore
from snakegate.provenance.secrets import is_keyed_hash
from snakegate.registry.workflows import Registry
from snakegate.config.read import read_run_config
from snakegate.registry.settings import Settings


class ForkRefused(UserError):
    """The fork cannot be made: the message says why; `result` holds the gate's refusal when there is one."""

    def __init__(self, message: str, code: str, result: GateResult | None = None):
        super().__init__(message, ExitCode.INVALID)
        self.code = code
        self.result = result


@dataclass(frozen=True)
class ForkPlan:
    parent: Path                   # the parent run folder
    parent_invocation_id: str | None
    invocation: dict               # {workflow, version?, params}: the fork's run config
    result: GateResult             # the fork's gate result (ok)
    changes: dict[str, Any]        # dotted param name -> value
    changed_rules: list[str]       # rules whose jobs differ from the parent's
    recorded_changes: dict[str, Any] | None = None  # `changes` with x-sensitive values as their keyed hash

    def record(self) -> dict:
        """What the fork's run.json records about its parent."""
        return {"parent_run": self.parent.name, "parent_invocation_id": self.parent_invocation_id,
                "fork_changes": self.recorded_changes if self.recorded_changes is not None else self.changes}


def parent_invocation(run_dir: Path) -> dict:
    """The run config a run was started with (config.yaml minus run_id), else rebuilt from invocation.json."""
    config_path = run_dir / runstore.CONFIG_YAML
    if config_path.is_file():
        data, error = read_run_config(config_path)
        if error is None and isinstance(data, dict) and (isinstance(data.get("params"), dict)
                                                        or isinstance(data.get("steps"), dict)):
            return {k: copy.deepcopy(v) for k, v in data.items() if k != "run_id"}
    record = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
    inv = record.get("invocation") or {}
    if not inv.get("workflow"):
        raise UserError(f"run {run_dir.name} has neither a readable config.yaml nor invocation.json; "
                        "it cannot be run again", ExitCode.INVALID)
    hashed = sorted(k for k, v in (inv.get("params") or {}).items() if is_keyed_hash(v))
    if hashed:
        # invocation.json keeps only keyed hashes of x-sensitive values: they cannot be run again
        raise UserError(f"run {run_dir.name} has no readable config.yaml and its invocation.json holds only keyed "
                        f"hashes of the sensitive value(s) {', '.join(hashed)}; run its workflow again with a new "
                        "config (`snakegate init`)", ExitCode.INVALID)
    return {"workflow": inv["workflow"], "version": inv.get("version"), "invocation_id": record.get("invocation_id"),
            "params": copy.deepcopy(inv.get("params") or {})}


def apply_change(params: dict, parts: list[str], value: Any) -> None:
    """Set params[a][b]... = value for the dotted name a.b...; a missing group is created."""
    target = params
    for i, part in enumerate(parts[:-1]):
        nxt = target.get(part)
        if nxt is None:
            nxt = target[part] = {}
        if not isinstance(nxt, dict):
            raise UserError(f"{'.'.join(parts)}: `{'.'.join(parts[:i + 1])}` is {nxt!r}, not a group of "
                            "parameters, so it has no sub-key")
        target = nxt
    target[parts[-1]] = value


def _fork_plan(registry: Registry, settings: Settings, parent: Path, base: dict, changes: dict[str, Any],
               steps: dict[str, str]) -> ForkPlan:
    """A fork of a plan run: `changes` are `<step>.<param>` (a value may be `{from, output}`), `steps` maps a
    step to the workflow it now runs (a step replaced, its params started afresh; or a step added). The whole
    plan is gated again; the rules whose jobs differ from the parent's, and what depends on them, re-run."""
    from snakegate.plan import compose
    from snakegate.plan.prove import gate_plan
    from snakegate.run import plan_run

    plan = {k: copy.deepcopy(v) for k, v in base.items() if k not in ("invocation_id", "run_id")}
    plan_steps = plan["steps"]
    for name, workflow in steps.items():
        if name in plan_steps:
            plan_steps[name] = {"workflow": workflow, "params": {}}  # replaced: its params are the new workflow's
        else:
            plan_steps[name] = {"workflow": workflow, "params": {}}
    for name, value in changes.items():
        step, _, rest = name.partition(".")
        parts = rest.removeprefix("params.").split(".")
        if step not in plan_steps:
            raise UserError(f"{name!r}: run {parent.name} is a plan and has no step `{step}` (steps: "
                            f"{', '.join(plan_steps)}); write <step>.<param>=<value>")
        if not rest or any(not p for p in parts):
            raise UserError(f"{name!r} is not <step>.<param> (e.g. bench.label_column=island)")
        plan_steps[step].setdefault("params", {})
        apply_change(plan_steps[step]["params"], parts, value)
    # unchanged steps run their parent's code; a replaced or added step runs the registry's workflow
    try:
        pinned = plan_run.fork_registry(registry, parent, plan)
    except PinError as exc:
        raise ForkRefused(str(exc), "workflow") from None
    result = gate_plan(pinned, plan, settings)
    if not result.ok:
        raise ForkRefused(f"the fork of run {parent.name} does not pass the gate", "gate", result)
    parent_gate = gate_plan(pinned, {k: v for k, v in base.items() if k != "invocation_id"}, settings,
                            check_dag=False)
    try:
        before = _dag_jobs(compose.plan_dag(parent_gate, pinned, settings)) if parent_gate.ok else []
        after = _dag_jobs(compose.plan_dag(result, pinned, settings))
    except DagError as exc:
        raise ForkRefused(f"cannot compare the DAGs of run {parent.name} and the fork: {exc.message}", "dag") from None
    # the fork's own rules whose jobs differ (a replaced step's old rules are gone; the composer's target is not one)
    present = {job["rule"] for job in after}
    changed = [r[len(compose.RULE_PREFIX):] for r in compare.changed_rules(before, after)
               if r.startswith(compose.RULE_PREFIX) and r in present]
    parent_inv = base.get("invocation_id") or runstore.read_run(parent).get("invocation_id")
    if not changed or parent_inv == result.invocation_id:
        raise ForkRefused(f"{_shown(changes) or 'the change'} changes no job of run {parent.name}: the fork would "
                          f"repeat it; use `snakegate rerun {parent.name}` for that", "no_change")
    record = {**changes, **{f"{n}.workflow": w for n, w in steps.items()}}
    return ForkPlan(parent=parent, parent_invocation_id=parent_inv, invocation=plan, result=result,
                    changes=record, changed_rules=changed,
                    recorded_changes=_hidden(record, {"type": "object", "properties": {
                        n: pinned.get(result.steps[n].workflow).schema for n in result.order}}, settings))


def _hidden(changes: dict[str, Any], schema: dict, settings: Settings) -> dict[str, Any]:
    """The changes as run.json records them from its first byte: an x-sensitive value as its keyed hash."""
    from snakegate.provenance import secrets

    out = {}
    for name, value in changes.items():
        nested: dict = {}
        apply_change(nested, name.removeprefix("params.").split("."), value)
        if secrets.sensitive_values(schema, nested):
            nested, _ = secrets.redact(schema, nested, secrets.registry_key(settings.registry_root))
            for part in name.removeprefix("params.").split("."):
                nested = nested[part]
            value = nested
        out[name] = value
    return out


def _dag_jobs(dag) -> list[dict]:
    return [{"rule": j.rule, "output": j.output, "input": j.input, "params": j.params} for j in dag.jobs]


def _shown(changes: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in changes.items())


def plan_fork(registry: Registry, settings: Settings, parent: Path, changes: dict[str, Any],
              steps: dict[str, str] | None = None) -> ForkPlan:
    """Gate the parent's invocation with `changes` applied and name the rules that must re-run.

    Raises ForkRefused (code `gate` with the refusal, `record`, `dag`, or `no_change`)."""
    from snakegate.run import integrity

    check = integrity.check_record(parent, settings.registry_root)
    if not check.ok:
        raise ForkRefused(integrity.refusal_text(parent, check, "forked"), "record")
    base = parent_invocation(parent)
    from snakegate.plan.config import is_plan

    if is_plan(base):
        return _fork_plan(registry, settings, parent, base, changes, steps or {})
    if steps:
        raise UserError(f"run {parent.name} ran one workflow, not a plan: --replace and --add change a plan's steps")
    params = copy.deepcopy(base.get("params") or {})
    for name, value in changes.items():
        parts = name.removeprefix("params.").split(".")
        if any(not p for p in parts):
            raise UserError(f"{name!r} is not a parameter name (empty part in the dotted name)")
        apply_change(params, parts, value)
    invocation = {"workflow": base["workflow"], "params": params}
    if base.get("version"):
        invocation["version"] = base["version"]
    # a fork changes params, never code: it is gated against (and runs) the parent's workflow copy
    try:
        registry = registry_of_run(registry, parent, str(base["workflow"]))
    except PinError as exc:
        raise ForkRefused(str(exc), "workflow") from None
    result = gate(registry, invocation, settings)
    if not result.ok:
        raise ForkRefused(f"the fork of run {parent.name} does not pass the gate", "gate", result)
    wf = registry.get(result.workflow)
    # compare like with like: the parent's params resolved as the gate resolves the fork's
    # (config.yaml already holds them so; invocation.json, the fallback, has registry-relative paths)
    parent_gate = gate(registry, {k: v for k, v in base.items() if k != "invocation_id"}, settings, check_dag=False)
    parent_params = parent_gate.resolved_params if parent_gate.ok else base.get("params") or {}
    try:
        changed = compare.changed_rules(_dag_jobs(build_dag(wf.snakefile, parent_params)),
                                        _dag_jobs(build_dag(wf.snakefile, result.resolved_params)))
    except DagError as exc:
        raise ForkRefused(f"cannot compare the DAGs of run {parent.name} and the fork: {exc.message}", "dag") from None
    parent_inv = base.get("invocation_id") or runstore.read_run(parent).get("invocation_id")
    if not changed or parent_inv == result.invocation_id:
        raise ForkRefused(f"{_shown(changes)} changes no job of run {parent.name}: the fork would repeat it; "
                          f"use `snakegate rerun {parent.name}` for that", "no_change")
    return ForkPlan(parent=parent, parent_invocation_id=parent_inv, invocation=invocation, result=result,
                    changes=dict(changes), changed_rules=list(changed),
                    recorded_changes=_hidden(changes, wf.schema, settings))
