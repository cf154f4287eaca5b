"""A plan's run: one run folder, one approval, one DAG, one record, each step under runs/<run_id>/steps/<step>/.

What a single workflow's run does (snakegate.run.entry, prepare, stage, guard, seal) a plan's run does
for every step at once: the plan is gated whole (snakegate.plan.prove), each step's workflow is copied
to runs/<run_id>/steps/<step>/workflow/ (read-only, verified against the step's content hash), every
step's inputs are staged into the one runs/<run_id>/inputs/ (keys `steps.<step>.params...`), and the
Snakefile declares every step as a Snakemake module (snakegate.plan.compose), so an input one step
takes from another is the other step's output in the same DAG. config.yaml is the explicit plan
(`steps.<step>.params`, inputs by absolute path, references as `{from, output}`); invocation.json the
plan's canonical invocation, which proves itself (its id is its sha256) as a single one does.

Nothing here builds PROV itself (snakegate.provenance.capture_plan) or starts Snakemake (runner.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.contract.outputs import expand_outputs
from snakegate.models import GateError
from snakegate.plan import compose
from snakegate.plan.prove import PlanResult
from snakegate.provenance import runstore
from snakegate.registry.workflows import Registry, Workflow
from snakegate.run import pinning, staged
from snakegate.run.entry import MODULE_PREFIX, RunContext

STEPS_DIR = compose.STEPS_DIR


def step_dir(run_dir: Path, step: str) -> Path:
    return Path(run_dir) / STEPS_DIR / step


def step_entries(entries: dict | None, step: str) -> dict:
    """A step's part of the staging record, keyed as a single workflow's (`params.x`)."""
    prefix = f"steps.{step}."
    return {k[len(prefix):]: v for k, v in (entries or {}).items() if k.startswith(prefix)}


def gated_inputs(plan: PlanResult) -> dict[str, str]:
    """Every step's gated inputs, keyed `steps.<step>.params...` (what the run stages)."""
    return {f"steps.{name}.{key}": digest for name in plan.order
            for key, digest in plan.steps[name].invocation.inputs.items()}


def plan_explicit_config(plan: PlanResult, run_id: str) -> dict:
    """runs/<run_id>/config.yaml of a plan: every step's params resolved (absolute input paths), references
    as `{from, output}`, the ids that pin it."""
    steps = {}
    for name in plan.order:
        result = plan.steps[name]
        params = copy.deepcopy(result.resolved_params)
        for ref in plan.refs.get(name, []):
            _set(params, ref.parts, {"from": ref.source, "output": ref.output})
        steps[name] = {"workflow": result.workflow, "version": result.invocation.version, "params": params}
    out = {"steps": steps, "invocation_id": plan.invocation_id, "run_id": run_id}
    if plan.label is not None:
        out["plan"] = plan.label
    return out


def plan_invocation_record(plan: PlanResult) -> dict:
    from snakegate import __version__

    return {"invocation_id": plan.invocation_id, "kind": "plan", "invocation": plan.invocation,
            "gate": {"ok": True, "errors": [], "checks": plan.checks, "at": plan.gated_at,
                     "snakegate_version": __version__}}


def _set(obj, parts, value) -> None:
    for p in parts[:-1]:
        obj = obj[p]
    obj[parts[-1]] = value


def make_copies(registry: Registry, plan: PlanResult, run_dir: Path) -> dict[str, Workflow]:
    """Each step's workflow copied to runs/<run_id>/steps/<step>/workflow/ (verified, read-only); PinError."""
    out = {}
    for name in plan.order:
        result = plan.steps[name]
        pinning.make_copy(registry.get(result.workflow).folder, step_dir(run_dir, name),
                          result.invocation.workflow_hash)
        out[name] = pinning.load_copy(step_dir(run_dir, name), result.workflow)
    return out


def load_copies(run_dir: Path, plan_config: dict) -> dict[str, Workflow]:
    """The steps' workflow copies of a plan run (PinError when one is missing or unreadable)."""
    out = {}
    for name, step in (plan_config.get("steps") or {}).items():
        out[name] = pinning.load_copy(step_dir(run_dir, name), str((step or {}).get("workflow")))
    return out


def fork_registry(registry: Registry, parent: Path, plan_config: dict) -> Registry:
    """The registry a fork of a plan run is gated against: a step that runs the same workflow as in the
    parent runs the parent's copy; a replaced or added step the registry's workflow. PinError."""
    parent_config = runstore.read_json(Path(parent) / runstore.INVOCATION_JSON).get("invocation") or {}
    parent_steps = parent_config.get("steps") or {}
    workflows = dict(registry.workflows)
    for name, step in (plan_config.get("steps") or {}).items():
        before = parent_steps.get(name) or {}
        if before.get("workflow") == (step or {}).get("workflow") and (step_dir(parent, name) / pinning.COPY_DIR).is_dir():
            wf = pinning.load_copy(step_dir(parent, name), before["workflow"])
            workflows[wf.id] = wf
    return Registry(root=registry.root, workflows=workflows)


def pinned_registry(registry: Registry, copies: dict[str, Workflow]) -> Registry:
    """A registry holding only the run's copies (two steps of one workflow share its content)."""
    return Registry(root=registry.root, workflows={wf.id: wf for wf in copies.values()})


def stage_plan(run_dir: Path, plan: PlanResult, copies: dict[str, Workflow], settings) -> dict:
    from snakegate.run import stage

    stage.stage_steps(run_dir, [(f"steps.{name}.", plan.steps[name].input_files, plan.steps[name].invocation.inputs,
                                 copies[name].schema, plan.steps[name].resolved_params) for name in plan.order],
                      settings.registry_root, settings.stage_inputs)
    return staged.read_manifest(run_dir) or {}


@dataclass
class PlanRunContext(RunContext):
    """The run context of a plan (RunContext's `workflow` is its first step's copy, `result` the plan's)."""

    copies: dict[str, Workflow] = field(default_factory=dict, repr=False)

    @property
    def plan(self) -> PlanResult:
        return self.result

    def step_params(self) -> dict[str, dict]:
        """Each step's params as its module gets them (inputs: the staged copies)."""
        return {name: staged.staged_params(self.plan.steps[name].resolved_params, step_entries(self.staged, name),
                                           self.run_dir) for name in self.plan.order}

    @property
    def modules(self) -> list[dict]:
        return compose.modules(self.plan.order, self.copies, self.step_params(), self.plan.refs, self.prefix)

    @property
    def params(self) -> dict:
        return self.step_params()

    def declare_modules(self, workflow) -> None:
        compose.declare(workflow, self.modules)

    @property
    def targets(self) -> list[str]:
        return compose.targets(self.plan.order, self.copies, self.step_params(), self.prefix)

    def workflow_default_target(self, workflow) -> list:
        """What each step's own default rule asks for (the first rule of its module, as Snakemake takes it)."""
        out: list = []
        names = [r.name for r in workflow.rules]
        for name in self.plan.order:
            prefix = compose.rule_prefix(name)
            first = next((n for n in names if n.startswith(prefix)), None)
            if first is None:
                continue
            rule = workflow.get_rule(first)
            if rule.output:
                out += [] if rule.has_wildcards() else list(rule.output)
            else:
                out += list(rule.input)
        return out

    def apply_resources(self, workflow) -> None:
        from snakegate.contract import resources
        from snakegate.run.entry import GateRefused

        params = self.step_params()
        for name in self.plan.order:
            wf = self.copies[name]
            rules = wf.manifest.model_dump(exclude_none=True)["rules"]
            try:
                resources.apply(workflow, resources.resolve(rules, params[name]), compose.rule_prefix(name))
            except resources.ResourceError as exc:
                raise GateRefused(f"snakegate cannot give step {name}'s rules ({wf.id}) their resources: {exc}; "
                                  "no job was started") from None

    def explicit_config(self) -> dict:
        return plan_explicit_config(self.plan, self.run_id)

    def invocation_record(self) -> dict:
        return plan_invocation_record(self.plan)

    def secret_scope(self) -> tuple[dict, dict]:
        """Every step's schema and params, as one: {step: ...}."""
        schema = {"type": "object", "properties": {n: self.copies[n].schema for n in self.plan.order}}
        return schema, {n: self.plan.steps[n].resolved_params for n in self.plan.order}

    def identity(self) -> dict:
        return {"run_id": self.run_id, "workflow": f"plan {self.plan.label}" if self.plan.label else "plan",
                "version": None, "invocation_id": self.plan.invocation_id, "kind": "plan",
                "plan": {"label": self.plan.label,
                         "steps": {n: self.plan.steps[n].workflow for n in self.plan.order}}}

    def declared_outputs(self) -> list[dict]:
        out = []
        params = self.step_params()
        for name in self.plan.order:
            wf = self.copies[name]
            for output, path, type_name in expand_outputs(wf.manifest.outputs, params[name], wf.schema):
                rel = f"{STEPS_DIR}/{name}/{path}"
                out.append({"name": f"{name}.{output}", "path": f"{self.prefix}/{rel}", "type": type_name,
                            "step": name, "exists": (self.run_dir / rel).is_file()})
        return out

    def capture(self, snakemake_log: str | None, status: str) -> None:
        from snakegate.provenance import capture_plan

        capture_plan.capture(run_dir=self.run_dir, registry_root=self.settings.registry_root,
                             workdir=self.workdir or Path.cwd(),
                             steps=[(n, self.copies[n].manifest.model_dump(), self.copies[n].schema,
                                     self.copies[n].folder) for n in self.plan.order],
                             snakemake_log=snakemake_log, status=status, rule_prefix=MODULE_PREFIX,
                             record_hostname=self.settings.record_hostname)


def refusal(code: str, path: str, message: str, hint: str | None = None):
    from snakegate.run.entry import GateRefused, refusal_text
    from snakegate.models import GateResult

    error = GateError(path=path, code=code, message=message, hint=hint)
    return GateRefused(refusal_text(GateResult(ok=False, errors=[error])), [error])


def _unused_record(run_dir: Path) -> bool:
    return not (Path(run_dir) / runstore.RUN_JSON).exists()
