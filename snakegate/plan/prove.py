"""The plan gate: a whole plan proven in one pass before any step runs. Nothing runs unless this says ok.

In the order the steps take from each other (snakegate.plan.config), each step is gated exactly as a
single workflow is (snakegate.gate.prove: contract, data roots, formats, columns, sample sheets,
preflight, tools), except that a param taking `{from: STEP, output: NAME}` is checked against that
output's declaration instead of a file: the output exists in the upstream workflow's manifest, is made
for the upstream step's params (`when`), is one file, has the param's type, and every `x-column-of`
aimed at it names one of its declared columns (computed from the upstream step's params and inputs:
snakegate.contract.outputs), which is also what the step's preflight sees as the header. Errors name
the step: `steps.bench.params.label_column`. Then Snakemake builds the DAG of the whole plan, its
steps composed with its own `module`/`use rule` machinery (snakegate.plan.compose), in the sandbox.

The plan's canonical invocation is every step's canonical invocation (an input from another step
recorded as `{from, output}`), and the label; its sha256 is the plan's invocation id. Reads input
headers and hashes inputs (through the step gates); writes nothing.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.config.shape import shape_errors
from snakegate.contract import artifacts
from snakegate.contract.dialect import did_you_mean
from snakegate.contract.outputs import PatternError, declared_columns, expand_outputs, produced_when
from snakegate.gate.prove import gate
from snakegate.gate.upstream import PLACEHOLDER, Upstream
from snakegate.models import GateError, GateResult
from snakegate.plan.config import PlanConfig, Ref, order, read_plan
from snakegate.provenance.hashing import canonical_json, sha256_text
from snakegate.registry.settings import Settings
from snakegate.registry.workflows import Registry


@dataclass
class PlanResult:
    ok: bool
    errors: list[GateError] = field(default_factory=list)
    label: str | None = None
    order: list[str] = field(default_factory=list)
    steps: dict[str, GateResult] = field(default_factory=dict)  # each step's gate result (ok ones)
    refs: dict[str, list[Ref]] = field(default_factory=dict)  # step -> the inputs it takes from other steps
    invocation: dict | None = None  # canonical: {"plan", "steps": {name: step invocation}}
    invocation_id: str | None = None
    checks: list[str] = field(default_factory=list)
    gated_at: str | None = None

    @property
    def workflow(self) -> str | None:  # the single-workflow GateResult's field, for code that shows either
        return None

    def summary_json(self) -> dict:
        return {"ok": self.ok, "invocation_id": self.invocation_id, "plan": self.label,
                "steps": {n: {"workflow": r.workflow, "invocation_id": r.invocation_id} for n, r in self.steps.items()},
                "errors": [{"path": e.path, "code": e.code, "message": e.message, "hint": e.hint} for e in self.errors]}


def _in_step(step: str, errors: list[GateError]) -> list[GateError]:
    """A step gate's errors with paths under the step (`params.x` -> `steps.<step>.params.x`), in the
    message as in the path."""
    return [e.model_copy(update={"path": f"steps.{step}.{e.path}" if e.path else f"steps.{step}",
                                 "message": e.message.replace("`params.", f"`steps.{step}.params.")})
            for e in errors]


def _set(obj: Any, parts: tuple, value: Any) -> None:
    for p in parts[:-1]:
        obj = obj[p]
    obj[parts[-1]] = value


def _header_of(result: GateResult, schema: dict, upstream: dict[str, Upstream]):
    """A function giving the header of one of a gated step's table params: its file's, or for an input it
    takes from an earlier step, that output's declared columns."""
    props = (schema or {}).get("properties") or {}

    def header_of(param: str) -> list[str] | None:
        value = (result.resolved_params or {}).get(param)
        if not isinstance(value, str):
            return None
        if value in upstream:
            made = upstream[value].columns
            return list(made) if made is not None else None
        type_name = (props.get(param) or {}).get("x-artifact")
        if not isinstance(type_name, str) or not artifacts.is_table(type_name):
            return None
        return artifacts.header(Path(value), type_name)
    return header_of


def _upstream(ref: Ref, registry: Registry, plan: PlanConfig, done: dict[str, GateResult],
              upstream_of: dict[str, dict[str, Upstream]]) -> tuple[Upstream | None, GateError | None]:
    """What `ref` will receive (its Upstream), or why it cannot; (None, None) when the step it takes from
    was itself refused (its errors say why; no second error here)."""
    result = done.get(ref.source)
    if result is None or not result.ok:
        return None, None
    wf = registry.get(result.workflow)
    outputs = wf.manifest.outputs
    decl = outputs.get(ref.output)
    if decl is None:
        close = did_you_mean(ref.output, list(outputs))
        return None, GateError(path=ref.path, code="plan_unknown_output",
                               message=f"`{ref.path}` takes output `{ref.output}` of step `{ref.source}`, but "
                                       f"workflow {wf.id} declares no such output (outputs: {', '.join(outputs)})",
                               hint=f"did you mean `{close}`?" if close else "name one of its declared outputs",
                               choices=list(outputs))
    params = result.resolved_params or {}
    if not produced_when(decl, params):
        return None, GateError(path=ref.path, code="plan_output_not_made",
                               message=f"`{ref.path}` takes output `{ref.output}` of step `{ref.source}`, which "
                                       f"workflow {wf.id} makes only when {_when_text(decl)}; step `{ref.source}`'s "
                                       "params do not",
                               hint=f"set those params in step `{ref.source}`, or take another output")
    try:
        paths = [p for name, p, _t in expand_outputs({ref.output: decl}, params, wf.schema) if name == ref.output]
    except (PatternError, OSError) as exc:
        paths, why = [], str(exc)
    else:
        why = f"{len(paths)} files"
    if len(paths) != 1:
        return None, GateError(path=ref.path, code="plan_type_mismatch",
                               message=f"`{ref.path}` takes one file, but output `{ref.output}` of step "
                                       f"`{ref.source}` is {why} for its params",
                               hint="take an output that is one file")
    columns = declared_columns(decl, params, _header_of(result, wf.schema, upstream_of.get(ref.source, {})))
    return Upstream(ref.source, ref.output, decl.type, tuple(columns) if columns is not None else None), None


def _when_text(decl) -> str:
    when = getattr(decl, "when", None) or {}
    return " and ".join(f"`{k}` is {v if not isinstance(v, list) else ' or '.join(map(str, v))}"
                        for k, v in when.items()) or "some params"


def _in_step_reads(prefix: str, read_input):
    """A step's read_input: the plan's, asked with the step's prefix on the key."""
    if read_input is None:
        return None
    return lambda key, source: read_input(prefix + key, source)


def gate_plan(registry: Registry, config: Any, settings: Settings, *, check_dag: bool = True,
              check_tools: bool = True, staged: dict[str, tuple[str, str]] | None = None,
              read_input: Callable[[str, Path], Path | None] | None = None) -> PlanResult:
    """Prove a plan config complete and runnable, or say precisely why not (every refusal found at once).

    `staged`: a run's staging record keyed `steps.<step>.params...` (see gate()). `read_input` (input key
    `steps.<step>.params...`, source) -> what that input's content checks read (see gate())."""
    errors = shape_errors(config)
    if errors:
        return PlanResult(ok=False, errors=errors)
    plan, errors = read_plan(config)
    if plan is None:
        return PlanResult(ok=False, errors=errors)
    steps_order, cycle = order(plan)
    errors += cycle
    if cycle:
        steps_order += [s for s in plan.steps if s not in steps_order]
    done: dict[str, GateResult] = {}
    upstream_of: dict[str, dict[str, Upstream]] = {}
    refused_refs = {e.path for e in errors}
    for step in plan.steps.values():  # a value that is neither a value nor a reference: refused once
        refused_refs.update(e.path for e in errors if e.path.startswith(f"steps.{step.name}."))
    for name in steps_order:
        step = plan.steps[name]
        params = copy.deepcopy(step.params)
        upstream: dict[str, Upstream] = {}
        for ref in step.refs:
            if ref.path in refused_refs or ref.source not in plan.steps:
                _set(params, ref.parts, f"{PLACEHOLDER}?")  # already refused: only the rest is checked
                continue
            made, why = _upstream(ref, registry, plan, done, upstream_of)
            if why is not None:
                errors.append(why)
            if made is None:
                _set(params, ref.parts, f"{PLACEHOLDER}?")
                continue
            upstream[made.placeholder] = made
            _set(params, ref.parts, made.placeholder)
        invocation = {"workflow": step.workflow, "params": params}
        if step.version is not None:
            invocation["version"] = step.version
        prefix = f"steps.{name}."
        result = gate(registry, invocation, settings, check_dag=False, check_tools=check_tools,
                      staged={k[len(prefix):]: v for k, v in (staged or {}).items() if k.startswith(prefix)},
                      upstream=upstream, read_input=_in_step_reads(prefix, read_input))
        # an input that was refused as a reference is not a second problem of the step
        errors += [e for e in _in_step(name, result.errors)
                   if f"{PLACEHOLDER}?" not in e.message and e.path not in refused_refs]
        done[name] = result
        upstream_of[name] = upstream
    label = plan.label
    if errors:
        return PlanResult(ok=False, errors=errors, label=label, order=steps_order)
    canonical = {"plan": label, "steps": {}}
    for name in steps_order:
        inv = done[name].invocation.model_dump()
        for ref in plan.steps[name].refs:
            _set(inv["params"], ref.parts, {"from": ref.source, "output": ref.output})
        canonical["steps"][name] = inv
    invocation_id = sha256_text(canonical_json(canonical))
    if plan.claimed_id is not None and plan.claimed_id != invocation_id:
        return PlanResult(ok=False, label=label, order=steps_order, errors=[GateError(
            path="invocation_id", code="invocation_mismatch",
            message=(f"this plan was approved as invocation {str(plan.claimed_id)[:12]}… but now gates as "
                     f"{invocation_id[:12]}…: a step's workflow, an input file or a parameter changed since"),
            hint="restore the original files, or remove `invocation_id` and have the new plan approved")])
    result = PlanResult(ok=True, label=label, order=steps_order, steps=done,
                        refs={n: list(plan.steps[n].refs) for n in steps_order}, invocation=canonical,
                        invocation_id=invocation_id,
                        checks=["plan", "steps", "edges", "types", "columns", *(["dag"] if check_dag else [])],
                        gated_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"))
    if check_dag:
        from snakegate.plan import compose

        problem = compose.dag_problem(result, registry, settings)
        if problem is not None:
            return PlanResult(ok=False, label=label, order=steps_order, errors=[problem])
    return result
