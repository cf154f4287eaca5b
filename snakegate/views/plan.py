"""A plan's run read as a plan: its steps (name, workflow, version, params, contract), the edges between them
(`bench.dataset ← clean.cleaned`), and which outputs and jobs are whose, as plain data for every view of a
run (`snakegate runs`, `show-run`, `report`, `diff`, `export`, the chat's history, the run actions).

A run is a plan's when run.json or invocation.json says `kind: plan`. The steps come from invocation.json
(the plan's canonical invocation: each step's workflow, version, content hash and params, sensitive values as
keyed hashes, an input taken from another step as `{from, output}`), checked as a plan config is
(snakegate.plan.config: step names, references) and put in the order the run took them (each step after the
steps it takes from; ties by name, as the record keeps them). A step's contract is its run folder copy's
(runs/<id>/steps/<step>/workflow/), else the registry's workflow of that id, else none: then every value of
that step is masked (fail closed). A record that is not a plan's shape gives what run.json's `plan` says
(names and workflows), never an error.

Reads the run folder (and a step's workflow from the registry when its copy is gone); writes nothing, runs
nothing. Every view masks through `masked_params(step)` / `scope()`; nothing here shows a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.provenance import runstore

STEP_SEPARATOR = "__"  # a plan's rules are wf_<step>__<rule>; records keep <step>__<rule>
ARROW = "←"


@dataclass(frozen=True)
class Edge:
    """One input a step takes from another step's declared output."""

    step: str     # the step that takes it
    param: str    # where in that step's params: `dataset`, `samples[0].reads`
    source: str   # the step that makes it
    output: str   # the source step's declared output

    @property
    def text(self) -> str:
        return f"{self.step}.{self.param} {ARROW} {self.source}.{self.output}"

    def as_json(self) -> dict:
        return {"step": self.step, "param": self.param, "from": self.source, "output": self.output}


@dataclass(frozen=True)
class Step:
    name: str
    workflow: str | None
    version: str | None = None
    workflow_hash: str | None = None
    params: dict = field(default_factory=dict)   # as invocation.json holds them (sensitive: keyed hashes)
    schema: dict | None = None                   # its contract; None: unknown, every value is masked
    title: str | None = None
    description: str | None = None
    takes: tuple[Edge, ...] = ()
    outputs: dict = field(default_factory=dict)  # its workflow's declared outputs: name -> description

    @property
    def label(self) -> str:
        """'tabular-profile 1.0.0'."""
        return " ".join(str(v) for v in (self.workflow or "unknown workflow", self.version) if v)

    def as_json(self) -> dict:
        return {"name": self.name, "workflow": self.workflow, "version": self.version}


@dataclass(frozen=True)
class PlanView:
    label: str | None
    invocation_id: str | None
    steps: tuple[Step, ...]

    @property
    def edges(self) -> list[Edge]:
        return [e for s in self.steps for e in s.takes]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def title(self) -> str:
        """'plan sex-from-size' (or 'plan' without a label)."""
        return f"plan {self.label}" if self.label else "plan"

    @property
    def summary(self) -> str:
        """'sex-from-size (3 steps)'."""
        count = f"{len(self.steps)} step{'s' if len(self.steps) != 1 else ''}"
        return f"{self.label} ({count})" if self.label else f"{count}, no label"

    def workflows(self) -> set[str]:
        return {s.workflow for s in self.steps if s.workflow}

    def scope(self) -> tuple[dict, dict]:
        """(schema, params) of the whole plan as one contract, {step: ...}: what `params.masked_params`,
        `params.sensitive_name` and secrets take. A step without a contract is sensitive whole."""
        schema = {"type": "object", "properties": {
            s.name: s.schema if s.schema is not None else {"x-sensitive": True} for s in self.steps}}
        return schema, {s.name: s.params for s in self.steps}

    def as_json(self) -> dict:
        return {"label": self.label, "invocation_id": self.invocation_id,
                "steps": [s.as_json() for s in self.steps], "edges": [e.as_json() for e in self.edges]}


def is_plan_record(record: Any) -> bool:
    """Whether a run.json record (or a run summary) is a plan's."""
    return isinstance(record, dict) and (record.get("kind") == "plan" or isinstance(record.get("plan"), dict))


def is_plan_run(run_dir: Path, record: dict | None = None) -> bool:
    """Whether a run folder holds a plan's run (run.json or invocation.json says so)."""
    if is_plan_record(record if record is not None else runstore.read_run(run_dir)):
        return True
    return runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("kind") == "plan"


def step_of_rule(rule: Any) -> str | None:
    """'bench__train' (or 'wf_bench__train') -> 'bench'; None for a rule outside any step."""
    if not isinstance(rule, str) or STEP_SEPARATOR not in rule:
        return None
    return rule.removeprefix("wf_").split(STEP_SEPARATOR, 1)[0] or None


def own_name(name: Any, step: str) -> str:
    """'bench.metrics' -> 'metrics', 'bench__train' -> 'train' (a name as the step's workflow knows it)."""
    text = str(name)
    for sep in (".", STEP_SEPARATOR):
        if text.startswith(step + sep):
            return text[len(step) + len(sep):]
    return text


def read(run_dir: Path, registry=None, record: dict | None = None, contracts: bool = True) -> PlanView | None:
    """The plan of a run folder, or None when the run is not a plan's. Without `contracts` no step's
    workflow is read (a listing needs names only): every step's schema is None, so every value is masked."""
    run_dir = Path(run_dir)
    record = record if record is not None else runstore.read_run(run_dir)
    inv_record = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
    if not (is_plan_record(record) or inv_record.get("kind") == "plan"):
        return None
    invocation = inv_record.get("invocation") if isinstance(inv_record.get("invocation"), dict) else {}
    recorded = record.get("plan") if isinstance(record.get("plan"), dict) else {}
    label = invocation.get("plan") if isinstance(invocation.get("plan"), str) else \
        recorded.get("label") if isinstance(recorded.get("label"), str) else None
    inv_id = inv_record.get("invocation_id") if isinstance(inv_record.get("invocation_id"), str) else \
        record.get("invocation_id") if isinstance(record.get("invocation_id"), str) else None
    steps = _steps(run_dir, registry if contracts else None, invocation.get("steps"), recorded.get("steps"),
                   contracts)
    return PlanView(label=label, invocation_id=inv_id, steps=tuple(steps))


def _steps(run_dir: Path, registry, invoked: Any, recorded: Any, contracts: bool) -> list[Step]:
    from snakegate.contract.dialect import format_path
    from snakegate.plan.config import order, read_plan

    raw = invoked if isinstance(invoked, dict) and invoked else None
    if raw is None:  # no readable invocation: the names and workflows run.json recorded
        raw = {n: {"workflow": w} for n, w in (recorded or {}).items()} if isinstance(recorded, dict) else {}
    plain = {n: {"workflow": s.get("workflow"), "params": s.get("params") if isinstance(s.get("params"), dict)
                 else {}} for n, s in sorted(raw.items(), key=lambda kv: str(kv[0])) if isinstance(s, dict)}
    plan, _errors = read_plan({"steps": plain})  # a hostile step name (`../x`) is left out here, never read
    if plan is None:
        return []
    names, _cycle = order(plan)
    names += [n for n in plan.steps if n not in names]  # a record that loops: still every step, once
    out = []
    for name in names:
        step, source = plan.steps[name], raw.get(name) or {}
        wf = _workflow(run_dir, registry, name, step.workflow) if contracts else None
        takes = tuple(Edge(name, format_path(r.parts), r.source, r.output) for r in step.refs)
        out.append(Step(name=name, workflow=step.workflow, version=_text(source.get("version")),
                        workflow_hash=_text(source.get("workflow_hash")), params=step.params,
                        schema=wf.schema if wf is not None else None,
                        title=wf.manifest.title if wf is not None else None,
                        description=wf.manifest.description if wf is not None else None, takes=takes,
                        outputs={n: o.description for n, o in wf.manifest.outputs.items()} if wf is not None else {}))
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _workflow(run_dir: Path, registry, name: str, workflow_id: str | None):
    """The workflow a step ran: its copy in the run folder, else the registry's of that id, else None."""
    from snakegate.plan.compose import STEPS_DIR
    from snakegate.run import pinning

    if not isinstance(workflow_id, str):
        return None
    try:
        return pinning.load_copy(Path(run_dir) / STEPS_DIR / name, workflow_id)
    except pinning.PinError:
        pass
    try:
        return registry.get(workflow_id) if registry is not None else None
    except Exception:  # noqa: BLE001 - a registry that cannot answer: no contract, every value masked
        return None


def masked_params(step: Step) -> dict:
    """A step's params with every sensitive value masked (views.params.masked_params, by its own contract)."""
    from snakegate.views.params import masked_params as mask

    return mask(step.schema, step.params)


def shown_params(step: Step) -> list[tuple[str, str]]:
    """(name, shown value) of a step's params: sensitive values masked, an input from another step (nested
    too) as `← clean.cleaned`."""
    from snakegate.views.params import value_text

    return [(name, value_text(with_arrows(value))) for name, value in masked_params(step).items()]


def with_arrows(value: Any) -> Any:
    """A (masked) value with every `{from, output}` in it as `← source.output`."""
    if isinstance(value, dict):
        if set(value) == {"from", "output"} and all(isinstance(v, str) for v in value.values()):
            return f"{ARROW} {value['from']}.{value['output']}"
        return {k: with_arrows(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_arrows(v) for v in value]
    return value


def outputs_by_step(record: dict, plan: PlanView) -> dict[str, list[dict]]:
    """run.json's outputs grouped by step (in the plan's order); an output no step claims goes under ''."""
    out: dict[str, list[dict]] = {name: [] for name in plan.names}
    for o in record.get("outputs") or []:
        if not isinstance(o, dict):
            continue
        step = o.get("step") if isinstance(o.get("step"), str) else str(o.get("name") or "").split(".", 1)[0]
        out.setdefault(step if step in out else "", []).append(o)
    return {k: v for k, v in out.items() if v or k}
