"""The platform actions: the only things a model (LLM or guided dialogue) can make snakegate do.

Owns the registry `ACTIONS` (one `Action` per platform action: name,
description, pydantic arguments, handler; the handlers live in data.py,
registry.py, plans.py, runs.py, refine.py, results.py, recovery.py and assess.py) and `call_action()`, which checks the
arguments (size cap, then pydantic), runs the handler and shapes a JSON-able
result: sensitive values scrubbed, paths shown relative to the registry and
never outside the data roots, size capped. Every action only reads and none
runs anything (`validate_params`, `fork_run`, `recover_run` and a plan
action whose plan passes the gate return a `Proposal` that the controller
writes as the draft); the one write is `assess_run`'s model-written annotation, appended outside every
run folder (snakegate.provenance.annotations). `call_action()` never
raises: bad arguments, an unknown action or a crash inside an action become an
`{"error": {...}}` result (fail closed: never an ok).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from snakegate.agent.actions import data as act_data, plans as act_plans, registry as act_registry, runs as act_runs
from snakegate.agent.actions import assess as act_assess, recovery as act_recovery, results as act_results
from snakegate.agent.actions import refine as act_refine
from snakegate.agent.actions.base import (  # noqa: F401 - re-exported: the actions' public vocabulary
    Action, ActionContext, ForkOrigin, Proposal, Refused, error_result,
)
from snakegate.agent.actions.limits import MAX_ARGUMENT_BYTES, PathView, arguments_too_large, json_size, result_too_large, \
    MAX_RESULT_BYTES
from snakegate.agent.redact import PLACEHOLDER, redact_params, scrub, secret_strings
from snakegate.contract.dialect import did_you_mean
from snakegate.errors import UserError

INVALID_JSON = "__invalid_json__"   # ToolCall.arguments key a backend uses when the model sent broken JSON

ACTIONS: dict[str, Action] = {a.name: a for a in (
    Action("search_workflows",
           "Find registry workflows matching the researcher's goal. Returns id, title, description, tags, score.",
           act_registry.SearchWorkflowsArgs, act_registry.search_workflows),
    Action("describe_workflow",
           "A workflow's parameter table (exact names, types, defaults, allowed values, which are input files "
           "(artifact) or column names (column_of), which are sensitive), its outputs and its advice on choosing "
           "values. Call it before validate_params.",
           act_registry.DescribeWorkflowArgs, act_registry.describe_workflow, workflow_fields=("workflow",)),
    Action("inspect_data",
           "Look at the researcher's data without reading cell values: list the data roots (empty path) or a "
           "folder, or report a file's artifact type, column names and row count.",
           act_data.InspectDataArgs, act_data.inspect_data),
    Action("validate_params",
           "Check a complete parameter set with the gate (schema, files, columns, Snakemake DAG). ok: a draft run "
           "config is written for the researcher to approve. Refused: errors with path, code, message, hint and "
           "choices to resolve with the researcher. This never runs the workflow.",
           act_registry.ValidateParamsArgs, act_registry.validate_params, workflow_fields=("workflow",)),
    Action("find_connections",
           "Which workflows can take an output of this workflow as an input file, and which can make the files it "
           "takes, by declared type and columns: how to chain workflows into a plan.",
           act_plans.FindConnectionsArgs, act_plans.find_connections, workflow_fields=("workflow",)),
    Action("propose_plan",
           "Chain workflows into one run: steps that each run a workflow with params, an input taken from an "
           "earlier step's output as {\"from\": step, \"output\": name}. The gate checks the whole plan (every "
           "step, the types and columns between them). ok: a draft is written for the researcher to approve. "
           "Refused: errors naming step and field, each with a question to ask. This never runs anything.",
           act_plans.ProposePlanArgs, act_plans.propose_plan),
    Action("add_step", "Add a step to the current plan (or start one), then check the whole plan as propose_plan does.",
           act_plans.PlanStepArgs, act_plans.add_step, workflow_fields=("workflow",)),
    Action("replace_step", "Replace a step of the current plan (its workflow and params), then check the whole plan.",
           act_plans.PlanStepArgs, act_plans.replace_step, workflow_fields=("workflow",)),
    Action("remove_step", "Remove a step from the current plan, then check the whole plan.",
           act_plans.StepNameArgs, act_plans.remove_step),
    Action("validate_plan", "Check the current plan with the gate again, as it is; ok writes its draft.",
           act_plans.NoArgs, act_plans.validate_plan),
    Action("list_runs", "Earlier runs, newest first: id, workflow, status, start time, duration.",
           act_runs.ListRunsArgs, act_runs.list_runs, workflow_fields=("workflow",)),
    Action("run_status", "One run: status, times, params (sensitive ones redacted), outputs, progress.",
           act_runs.RunArgs, act_runs.run_status),
    Action("explain_run",
           "Why a run ended as it did: for a failure the failing rule, the real error and its log's tail; the key "
           "numbers of its JSON outputs; any diagnostics the workflow wrote.",
           act_runs.RunArgs, act_runs.explain_run),
    Action("compare_runs", "What differs between two runs: parameters, output hashes, values inside JSON outputs.",
           act_runs.CompareRunsArgs, act_runs.compare_runs),
    Action("fork_run",
           "A new draft from an earlier run with only the named params changed (the gate checks it). The "
           "researcher approves it; running it re-runs only the jobs the change affects.",
           act_runs.ForkRunArgs, act_runs.fork_run),
    Action("summarize_run",
           "A finished run's summary, as the conversation gets it when a run ends: status, verdict (each check's "
           "value; a failing one's meaning and params), the failing rule and real error, key numbers, the first "
           "rows of its tables, what the run suggests changing.",
           act_runs.RunArgs, act_results.summarize_run),
    Action("recover_run",
           "After a failed run or a failing check: a new draft from that run with only the changes given (none: "
           "what the run itself suggests), recorded as a recovery of that check. The result names the evidence "
           "(the check's value and threshold and what the workflow says, or the failing rule and error). The "
           "researcher approves it.",
           act_recovery.RecoverRunArgs, act_recovery.recover_run),
    Action("assess_run",
           "Record your assessment of a run: a score on a rubric you state, with quotes from its summary as "
           "evidence. Stored beside the run's record, labelled model-written; it decides nothing.",
           act_assess.AssessRunArgs, act_assess.assess_run),
    Action("propose_refinement",
           "A bounded search around an earlier run, for the researcher to approve ONCE: the params that may vary "
           "with their candidate values, a budget of runs, and a stop rule (`until` a check of the workflow's "
           "evaluate: passes, or the `best` value of one). Every point is gated now; the researcher sees the whole "
           "space and approves it or not. Each run is then a fork of the one before. Use it after a failing "
           "verdict, with the params the failing check names. This never runs anything.",
           act_refine.ProposeRefinementArgs, act_refine.propose_refinement),
)}


@dataclass(frozen=True)
class Outcome:
    """One action call, shaped for the model (`result`) and for the researcher (`summary`)."""

    name: str
    arguments: dict[str, Any]     # sensitive values redacted
    result: dict[str, Any]        # JSON-able; sensitive values redacted, paths hidden; what the model receives
    ok: bool
    summary: str
    proposal: Proposal | None = None


# ---- argument problems ---------------------------------------------------------------------------
def _field_list(model) -> str:
    parts = []
    for name, f in model.model_fields.items():
        kind = getattr(f.annotation, "__name__", None) or str(f.annotation)
        parts.append(f"`{name}` ({kind}, {'required' if f.is_required() else f'default {f.default!r}'})")
    return ", ".join(parts)


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _bad_arguments(action: Action, exc: ValidationError) -> dict:
    problems, hints = [], []
    fields = list(action.args.model_fields)
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            problems.append(f"`{where}` is required")
        elif err["type"] == "extra_forbidden":
            problems.append(f"`{where}` is not an argument of {action.name}")
            close = difflib.get_close_matches(where, fields, n=1)
            if close:
                hints.append(f"did you mean `{close[0]}`?")
        else:
            problems.append(f"`{where}` {err['msg'][0].lower() + err['msg'][1:]} (got {_short(err.get('input'))})")
    hints.append(f"{action.name} takes {_field_list(action.args)}")
    return error_result("bad_arguments", f"bad arguments for {action.name}: " + "; ".join(problems), "; ".join(hints))


def _redacted_params(ctx: ActionContext, wf_id: Any, params: Any) -> Any:
    """`params` of workflow `wf_id` with every sensitive value as the placeholder (as sent when unknown)."""
    wf = ctx.registry.get(wf_id) if isinstance(wf_id, str) else None
    if wf is None or not isinstance(params, dict):
        return params
    try:
        return redact_params(wf.schema, params)
    except Exception:  # a broken schema: show nothing rather than a value that may be secret
        return PLACEHOLDER


def _redacted_arguments(ctx: ActionContext, name: str, arguments: dict) -> dict:
    """The arguments as the history and the audit log keep them: a workflow's params (a plan's steps' too)
    with every sensitive value as the placeholder."""
    if name in ("validate_params", "add_step", "replace_step") and "params" in arguments:
        return {**arguments, "params": _redacted_params(ctx, arguments.get("workflow"), arguments["params"])}
    if name == "propose_plan" and isinstance(arguments.get("steps"), list):
        return {**arguments, "steps": [
            {**step, "params": _redacted_params(ctx, step.get("workflow"), step["params"])}
            if isinstance(step, dict) and "params" in step else step for step in arguments["steps"]]}
    return dict(arguments)


def conversation_secrets(ctx: ActionContext) -> list[str]:
    """Every sensitive value this conversation knows, as text to scrub, longest first."""
    return secret_strings([*ctx.vault.values(), *ctx.known_secrets])


# ---- dispatch ------------------------------------------------------------------------------------
def _run(ctx: ActionContext, action: Action, arguments: dict) -> tuple[dict, str, Proposal | None]:
    name = action.name
    if INVALID_JSON in arguments:
        return error_result("bad_arguments",
                            f"the arguments of {name} are not valid JSON: {_short(arguments[INVALID_JSON], 120)}",
                            f"send one JSON object; {name} takes {_field_list(action.args)}"), "", None
    try:
        args = action.args.model_validate(arguments)
    except ValidationError as exc:
        return _bad_arguments(action, exc), "", None
    try:
        return action.run(ctx, args)
    except Refused as exc:
        return error_result(exc.code, exc.message, exc.hint), "", None
    except UserError as exc:
        return error_result("action_failed", f"{name} could not finish: {exc.message}",
                            "tell the researcher; this is not something new arguments fix"), "", None
    except Exception as exc:  # fail closed: a crash is an error result, never an ok
        return error_result("internal_error", f"{name} failed inside snakegate: {type(exc).__name__}: {exc}",
                            "tell the researcher; report it to the snakegate maintainers"), "", None


def call_action(ctx: ActionContext, name: str, arguments: dict | None) -> Outcome:
    """Check the arguments, run the action, shape the result. Never raises."""
    arguments = arguments if isinstance(arguments, dict) else {}
    view = PathView(ctx.settings.registry_root, ctx.settings.data_roots)
    action = ACTIONS.get(name)
    if action is None:
        close = did_you_mean(name, ACTIONS)
        result = error_result("unknown_action", f"there is no action `{_short(name, 80)}`",
                              (f"did you mean `{close}`? " if close else "")
                              + f"the actions are: {', '.join(ACTIONS)}; running a workflow is not one of them "
                                "(the researcher approves the draft)")
        return Outcome(_short(name, 80), {}, result, False, f"{_short(name, 80)}: unknown action")
    size = json_size(arguments)
    if size > MAX_ARGUMENT_BYTES:
        # Refused before anything looks at them, and never kept: the history holds {} instead.
        result = arguments_too_large(name, size)
        return Outcome(name, {}, result, False, f"{name}: {result['error']['message']}")
    shown_args = {} if INVALID_JSON in arguments else _redacted_arguments(ctx, name, arguments)
    result, summary, proposal = _run(ctx, action, arguments)
    # Gate sentences quote values (`got s3cret`) and paths (`resolves to /home/...`): scrub both.
    secrets = conversation_secrets(ctx)
    result = view.hide(scrub(result, secrets))
    error = result.get("error")
    if error is not None and not (isinstance(error, dict) and "code" in error and "message" in error):
        # `error` is the refusal of the call; an action answering with a field of that name is a defect (fail closed)
        result = error_result("internal_error", f"{name} answered with an `error` field that is not a refusal",
                              "tell the researcher; report it to the snakegate maintainers")
        error = result["error"]
    ok = error is None and result.get("ok", True) is True
    size = json_size(result)
    if size > MAX_RESULT_BYTES:
        result, ok = result_too_large(name, size), False
        error = result["error"]
    if error is not None:
        summary = f"{name}: {error['code']} — {error['message']}"
    if not ok:
        proposal = None
    return Outcome(name, view.hide(scrub(shown_args, secrets)), result, ok, view.hide(scrub(summary, secrets)),
                   proposal)


def result_json(result: dict) -> str:
    """The `role: tool` message content: the result as sorted JSON."""
    return json.dumps(result, sort_keys=True, default=str)
