"""The plan actions: `propose_plan`, `add_step`, `replace_step`, `remove_step`, `validate_plan`, and
`find_connections`, the traversal a plan is built by.

A plan chains registry workflows into one run (snakegate.plan.config): a step's input file may be
`{"from": <step>, "output": <a declared output of that step>}`. The conversation keeps the plan being
built in `ActionContext.plan`; each action changes it (propose replaces it whole, the others change one
step) and then proves the whole plan with the plan gate (`gate_plan`: the same proof `snakegate
validate`, `snakegate run` and the top-level Snakefile use). Passing, the answer carries a `Proposal`
the controller writes as the draft (drafts/<label or "plan">-<id>.yaml) for the person to approve;
refused, every error names its step and field and carries the question to put to the researcher, and
the plan keeps the change so the next action fixes it. A change the arguments themselves make
impossible (an unknown step, a name already taken) is refused and leaves the plan as it was.
`find_connections` answers which workflows can consume an output, or produce an input, from the
declared types and columns (snakegate.registry.links). Nothing here writes a file or runs anything,
and a sensitive value only ever leaves as "<redacted>".
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from snakegate.agent.actions import limits
from snakegate.agent.actions.base import (
    RARE, ActionContext, Args, ForkOrigin, PlanOutline, PlanStep, Proposal, Refused, find_workflow,
)
from snakegate.agent.actions.data import portable
from snakegate.agent.actions.registry import take_sensitive
from snakegate.agent.redact import redact_params
from snakegate.config.shape import shape_errors
from snakegate.contract.dialect import did_you_mean, fill_defaults, format_path
from snakegate.plan.prove import PlanResult, gate_plan
from snakegate.registry import links

REFERENCE = ('an input file that an earlier step makes is {"from": "<that step\'s name>", "output": "<its output '
             'name>"} (find_connections and describe_workflow name the outputs)')
PLAN_ACTIONS = ("propose_plan", "add_step", "replace_step", "remove_step", "validate_plan")  # change or gate it
SAFE_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # a label this simple also names the draft file


class PlanStepArgs(Args):
    name: str = Field(description="The step's name, unique in the plan: lowercase letters, digits and single "
                                  "underscores, starting with a letter, e.g. 'clean' or 'bench'.")
    workflow: str = Field(description="The workflow id the step runs, e.g. 'tabular-profile'.")
    params: dict[str, Any] = Field(default_factory=dict,
                                   description="Parameter name -> value, the exact names describe_workflow lists; "
                                               "leave one out for its default; send '<redacted>' for a sensitive "
                                               f"value the researcher entered; {REFERENCE}.")


class ProposePlanArgs(Args):
    steps: list[PlanStepArgs] = Field(min_length=1, max_length=limits.MAX_PLAN_STEPS,
                                      description="The steps, each {name, workflow, params}. They run in the order "
                                                  "their inputs need, whatever the order written here.")
    label: str = Field("", description="Optional short label for the plan, e.g. 'penguin-study'.",
                       json_schema_extra=RARE)


class StepNameArgs(Args):
    name: str = Field(description="The name of a step of the current plan.")


class NoArgs(Args):
    pass


class FindConnectionsArgs(Args):
    workflow: str = Field(description="A workflow id, e.g. 'tabular-profile'.")
    output: str = Field("", description="Only this output of it: which workflows can take it as an input.",
                        json_schema_extra=RARE)
    param: str = Field("", description="Only this input-file param of it: which workflows can make that file.",
                       json_schema_extra=RARE)


# ---- find_connections ----------------------------------------------------------------------------
def _other_side(link: links.Link, side: str) -> dict:
    """A link as one workflow's answer shows it: the other workflow and what to know about the pairing."""
    out = link.as_dict()
    drop = ("producer", "output", "output_type", "columns") if side == "consumer" else \
        ("consumer", "param", "param_type", "column_params", "set_these")
    return {k: v for k, v in out.items() if k not in drop}


def find_connections(ctx: ActionContext, args: FindConnectionsArgs):
    wf = find_workflow(ctx, args.workflow)
    outputs, takes = wf.manifest.outputs, links.inputs(wf.schema)
    if args.output and args.output not in outputs:
        close = did_you_mean(args.output, list(outputs))
        raise Refused("unknown_output", f"{wf.id} declares no output `{args.output}` (outputs: {', '.join(outputs)})",
                      f"did you mean `{close}`?" if close else "name one of its outputs, or leave `output` empty")
    if args.param and args.param not in takes:
        close = did_you_mean(args.param, list(takes))
        raise Refused("unknown_param", f"`{args.param}` is not an input-file param of {wf.id} "
                                       f"(they are: {', '.join(takes) or 'none'})",
                      f"did you mean `{close}`?" if close else "name one of them, or leave `param` empty")
    result: dict[str, Any] = {"workflow": wf.id}
    shown = []
    if not args.param:
        result["outputs"] = []
        for name in [args.output] if args.output else list(outputs):
            found = links.consumers(ctx.registry, wf.id, name)
            entry = {"output": name, "type": outputs[name].type}
            if links.columns_text(outputs[name]) is not None:
                entry["columns"] = links.columns_text(outputs[name])
            entry["consumed_by"] = [_other_side(link, "consumer") for link in found]
            result["outputs"].append(entry)
            shown += [f"{name} → {link.consumer}.{link.param}" for link in found]
    if not args.output:
        result["inputs"] = []
        for param in [args.param] if args.param else list(takes):
            found = links.producers(ctx.registry, wf.id, param)
            result["inputs"].append({"param": param, "type": takes[param],
                                     "produced_by": [_other_side(link, "producer") for link in found]})
            shown += [f"{param} ← {link.producer}.{link.output}" for link in found]
    result["use"] = f"in a plan, {REFERENCE.split(' (', 1)[0]}"
    listed = ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")
    return result, f"connections of {wf.id}: {listed or 'none'}", None


# ---- the plan being built ------------------------------------------------------------------------
def _step(args: PlanStepArgs) -> dict:
    # not copied: the arguments are this call's own, and their shape is checked before anything walks them
    return {"workflow": args.workflow, "params": args.params}


def _current(ctx: ActionContext) -> dict:
    """A copy of the plan being built (an action never changes it in place: a refused shape keeps the old)."""
    if not ctx.plan or not ctx.plan.get("steps"):
        raise Refused("no_plan", "there is no plan in this conversation yet",
                      "call propose_plan with its steps first")
    return copy.deepcopy(ctx.plan)


def _known_step(plan: dict, name: str) -> None:
    if name not in plan["steps"]:
        steps = list(plan["steps"])
        close = did_you_mean(name, steps)
        raise Refused("unknown_step", f"the plan has no step `{name}` (steps: {', '.join(steps)})",
                      f"did you mean `{close}`?" if close else "name one of its steps")


def propose_plan(ctx: ActionContext, args: ProposePlanArgs):
    names = [s.name for s in args.steps]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise Refused("step_exists", f"step name{'s' if len(twice) > 1 else ''} {', '.join(twice)} used more than once",
                      "give every step its own name, e.g. `bench` and `bench_2`")
    label = args.label.strip()
    if len(label) > 64 or not label.isprintable():  # it titles the draft wherever the person is asked
        raise Refused("bad_arguments", "`label` must be one line of at most 64 printable characters",
                      "give a short label such as `penguin-study`, or leave it out")
    plan = {"plan": label or None, "steps": {s.name: _step(s) for s in args.steps}}
    return _gated(ctx, plan, "proposed the plan")


def add_step(ctx: ActionContext, args: PlanStepArgs):
    plan = _current(ctx) if ctx.plan and ctx.plan.get("steps") else {"plan": None, "steps": {}}
    if args.name in plan["steps"]:
        raise Refused("step_exists", f"the plan already has a step `{args.name}` ({plan['steps'][args.name]['workflow']})",
                      "call replace_step to change it, or give the new step another name")
    if len(plan["steps"]) >= limits.MAX_PLAN_STEPS:
        raise Refused("plan_too_long", f"a plan holds at most {limits.MAX_PLAN_STEPS} steps",
                      "run this as a plan of its own, or remove a step first")
    plan["steps"][args.name] = _step(args)
    return _gated(ctx, plan, f"added step {args.name}")


def replace_step(ctx: ActionContext, args: PlanStepArgs):
    plan = _current(ctx)
    _known_step(plan, args.name)
    plan["steps"][args.name] = _step(args)
    return _gated(ctx, plan, f"replaced step {args.name}")


def remove_step(ctx: ActionContext, args: StepNameArgs):
    plan = _current(ctx)
    _known_step(plan, args.name)
    if len(plan["steps"]) == 1:
        raise Refused("plan_empty", f"`{args.name}` is the plan's only step; a plan needs at least one",
                      "propose a new plan, or validate_params for a single workflow")
    del plan["steps"][args.name]
    return _gated(ctx, plan, f"removed step {args.name}")


def validate_plan(ctx: ActionContext, args: NoArgs):
    return _gated(ctx, _current(ctx), "validated the plan")


# ---- the gate ------------------------------------------------------------------------------------
def _config(plan: dict) -> dict:
    config = {"steps": copy.deepcopy(plan["steps"])}
    if plan.get("plan"):
        config = {"plan": plan["plan"], **config}
    return config


def _step_field(path: str) -> tuple[str | None, str | None]:
    """`steps.bench.params.label_column` -> ("bench", "label_column"); a step-level path gives no field."""
    m = re.match(r"^steps\.([^.\[]+)(?:\.params\.?(.*)|\.(\w+))?$", path or "")
    if not m:
        return None, None
    return m.group(1), m.group(2) or m.group(3)


def _question(path: str, step: str | None, field: str | None, workflow: str | None, message: str,
              hint: str | None) -> str:
    """The refusal as a question for the researcher, naming the step and the field (once: the gate's own
    sentence loses its leading path)."""
    fix = f" ({hint[:1].lower() + hint[1:].rstrip('.')})" if hint else ""
    if path and message.startswith(f"`{path}` "):
        message = message[len(path) + 3:]
    said = message.rstrip(".")
    if step and field:
        return f"Step `{step}` ({workflow or 'unknown workflow'}), `{field}`: {said}{fix}. What should `{field}` be?"
    if step:
        return f"Step `{step}` ({workflow or 'unknown workflow'}): {said}{fix}. How should this step change?"
    return f"{said[:1].upper() + said[1:]}{fix}. How should the plan change?"


def plan_errors(plan: dict, errors: list) -> list[dict]:
    """Gate errors (GateError or dicts) as the model gets them: path, code, message, hint, choices, plus the
    step and field they are about and the question to ask."""
    out = []
    for e in errors:
        e = e if isinstance(e, dict) else e.model_dump()
        step, field = _step_field(e.get("path") or "")
        workflow = ((plan.get("steps") or {}).get(step) or {}).get("workflow") if step else None
        workflow = workflow if isinstance(workflow, str) else None
        path, message = str(e.get("path") or ""), str(e.get("message") or "")
        out.append({"path": e.get("path"), "code": e.get("code"), "message": e.get("message"), "hint": e.get("hint"),
                    "choices": e.get("choices"), "step": step, "field": field,
                    "question": _question(path, step, field, workflow, message, e.get("hint"))})
    return out


def _refused(ctx: ActionContext, errors: list, verb: str):
    shown = plan_errors(ctx.plan, errors)
    where = ", ".join(f"{e['path']} [{e['code']}]" for e in shown[:3]) + (" …" if len(shown) > 3 else "")
    return ({"ok": False, "plan": _shown_steps(ctx), "errors": shown},
            f"{verb}: the plan is refused, {len(shown)} problem(s): {where}", None)


def _shown_steps(ctx: ActionContext) -> list[dict]:
    """The plan being built as the model may see it: every sensitive value as "<redacted>"."""
    out = []
    for name, step in ctx.plan["steps"].items():
        wf = ctx.registry.get(step.get("workflow")) if isinstance(step.get("workflow"), str) else None
        params = step.get("params") if isinstance(step.get("params"), dict) else {}
        out.append({"name": name, "workflow": step.get("workflow"),
                    "params": redact_params(wf.schema, params) if wf is not None else params})
    return out


def _gated(ctx: ActionContext, plan: dict, verb: str):
    """`plan` becomes the plan being built (unless its shape is hostile) and is gated whole; (answer,
    summary, Proposal or None)."""
    hostile = shape_errors(plan)
    if hostile:  # before anything copies, walks or prints the values; the plan stays as it was
        return ({"ok": False, "errors": plan_errors({}, hostile)},
                f"{verb}: refused, {hostile[0].path} [{hostile[0].code}]", None)
    ctx.plan = plan
    config = _config(plan)
    errors = []
    for name, step in config["steps"].items():
        wf = ctx.registry.get(step.get("workflow")) if isinstance(step.get("workflow"), str) else None
        if wf is not None and isinstance(step.get("params"), dict):
            step["params"], missing = take_sensitive(ctx, wf, step["params"], f"steps.{name}.params")
            errors += missing
    if errors:
        return _refused(ctx, errors, verb)
    result = gate_plan(ctx.registry, config, ctx.settings, check_dag=True)
    if not result.ok:
        return _refused(ctx, result.errors, verb)
    return _passed(ctx, config, result, verb)


def draft_name(label: str | None) -> str:
    """The draft file's name stem: the label when it is a plain word (never a path), else "plan"."""
    return label if label and SAFE_LABEL.match(label) else "plan"


def _passed(ctx: ActionContext, config: dict, result: PlanResult, verb: str):
    shown, proposal = plan_proposal(ctx, config, result)
    chain = " → ".join(result.order)
    return shown, (f"{verb}: the plan passes the gate ({chain}; invocation {result.invocation_id[:12]}…)"), proposal


def plan_proposal(ctx: ActionContext, config: dict, result: PlanResult,
                  fork: ForkOrigin | None = None) -> tuple[dict, Proposal]:
    """The model's view of a plan that passed the gate, and the Proposal behind it (a fork of a plan run:
    with its origin, so the approval re-runs only what changed)."""
    steps = []
    for name in result.order:
        wf = ctx.registry.get(result.steps[name].workflow)
        takes = tuple((format_path(r.parts), r.source, r.output) for r in result.refs.get(name, []))
        steps.append(PlanStep(name=name, workflow=wf.id, version=result.steps[name].invocation.version,
                              params=fill_defaults(wf.schema, config["steps"][name]["params"]), takes=takes))
    outline = PlanOutline(result.label, tuple(steps))
    config_path = Path(ctx.settings.drafts_dir) / f"{draft_name(result.label)}-{result.invocation_id[:12]}.yaml"
    proposal = Proposal(workflow=outline.title, version="", invocation_id=result.invocation_id, params={},
                        config_path=config_path, plan=outline, fork=fork)
    shown = {"ok": True, "plan": result.label, "invocation_id": result.invocation_id, "order": list(result.order),
             "steps": [{"name": s.name, "workflow": s.workflow, "version": s.version,
                        "params": redact_params(ctx.registry.get(s.workflow).schema, s.params),
                        "takes": [{"param": p, "from": src, "output": out} for p, src, out in s.takes]}
                       for s in steps],
             "config_path": portable(config_path.absolute(), ctx.settings.registry_root)}
    return shown, proposal
