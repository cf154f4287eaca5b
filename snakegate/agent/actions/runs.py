"""The run actions: `list_runs`, `run_status`, `explain_run`, `compare_runs` and `fork_run`.

They read run folders (runs/<run_id>/: run.json, config.yaml, invocation.json,
logs, outputs) through the core's run store, comparison and fork planning, and
shape short answers: for a failure the failing rule, the real error and the
tail of its log; the verdict of a finished run (snakegate.views.verdict: its status,
each failing check with its value, threshold, what failing means and the params to
look at; `explain_run` every check); for a fork the numbers that changed against
its parent; the key numbers of JSON outputs; any diagnostics.json the
workflow wrote (snakegate.views.facts holds those facts, one definition for the CLI,
the report and these actions). `fork_run` returns a `Proposal` for a new draft (the researcher
still approves it; running it re-executes only what the change affects).
A plan's run is read as a plan (snakegate.views.plan): its label, its steps in order,
the edges between them, params by step, each by its own contract.
Nothing here runs, writes or deletes anything, and a run outside the runs
folder is never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from snakegate.agent.actions.base import RARE, ActionContext, Args, ForkOrigin, Refused
from snakegate.agent.actions.plans import plan_proposal
from snakegate.agent.actions.registry import gate_errors, proposal_for
from snakegate.plan.config import is_plan
from snakegate.agent.redact import PLACEHOLDER, redact_params, secret_strings, sensitive_values
from snakegate.errors import UserError
from snakegate.run.fork import ForkRefused, parent_invocation, plan_fork
from snakegate.provenance import compare, runstore
from snakegate.views import verdict as verdicts
from snakegate.views.facts import changed_numbers, cut_line, diagnostics, failure_facts, key_numbers, refinement_of
from snakegate.views.plan import is_plan_record, read as read_plan

VALUE_CHANGES = 20        # JSON value changes shown per output in compare_runs


class ListRunsArgs(Args):
    workflow: str = Field("", description="Only runs of this workflow id; empty for all.", json_schema_extra=RARE)
    status: str = Field("", description="Only runs with this status (succeeded, failed, cancelled, running, ...); "
                                        "empty for all.", json_schema_extra=RARE)
    limit: int = Field(10, ge=1, le=50, description="How many runs, newest first (1-50).", json_schema_extra=RARE)


class RunArgs(Args):
    run_id: str = Field(description="A run id as list_runs shows it, a unique prefix of one, or 'latest'.")


class CompareRunsArgs(Args):
    a: str = Field(description="The first run id (or unique prefix, or 'latest').")
    b: str = Field(description="The second run id (or unique prefix, or 'latest').")


class ForkRunArgs(Args):
    run_id: str = Field(description="The earlier run to start from: a run id, a unique prefix, or 'latest'.")
    changes: dict[str, Any] = Field(description="Parameter name -> new value, only for the params to change "
                                                "(dotted names reach nested params); everything else is kept.")


# ---- reading runs --------------------------------------------------------------------------------
def _run_dir(ctx: ActionContext, ref: str) -> Path:
    runs = Path(ctx.settings.runs_dir)
    if not ref.strip() or "/" in ref or "\\" in ref or ref.startswith("."):
        raise Refused("unknown_run", f"`{ref}` is not a run id", "use an id from list_runs, or 'latest'")
    try:
        found = runstore.find_run(runs, ref)
    except runstore.RunNotFound as exc:
        raise Refused("unknown_run", str(exc).replace("`snakegate runs` lists them", "list_runs lists them"),
                      "use an id from list_runs, or 'latest'")
    if found.resolve().parent != runs.resolve():
        raise Refused("unknown_run", f"`{ref}` is not a run of this registry", "use an id from list_runs")
    _learn_secrets(ctx, found)
    return found


def _schema_of(ctx: ActionContext, wf_id: str | None) -> dict | None:
    wf = ctx.registry.get(wf_id) if wf_id else None
    return wf.schema if wf is not None else None


def _learn_secrets(ctx: ActionContext, run_dir: Path) -> None:
    """A run's sensitive values (config.yaml holds them for Snakemake) must be scrubbed from what we show; a
    plan's, every step's by its own contract."""
    try:
        inv = parent_invocation(run_dir)
    except UserError:
        return
    plan = read_plan(run_dir, ctx.registry)
    if plan is not None:
        schema = plan.scope()[0]
        params = {n: (s or {}).get("params") or {} for n, s in (inv.get("steps") or {}).items()
                  if isinstance(s, dict)}
    else:
        schema = _schema_of(ctx, inv.get("workflow"))
        params = inv.get("params") or {}
    values = sensitive_values(schema, params).values() if schema else params.values()  # unknown: every value
    ctx.known_secrets.update(secret_strings(values))


def _shown_params(ctx: ActionContext, run_dir: Path) -> dict:
    plan = read_plan(run_dir, ctx.registry)
    if plan is not None:  # {step: params}, each by its own contract; an input from another step as {from, output}
        return {s.name: redact_params(s.schema, s.params) if s.schema is not None
                else {k: PLACEHOLDER for k in s.params} for s in plan.steps}
    try:
        inv = parent_invocation(run_dir)
    except UserError:
        return {}
    schema = _schema_of(ctx, inv.get("workflow"))
    params = inv.get("params") or {}
    return redact_params(schema, params) if schema else {k: PLACEHOLDER for k in params}


def _summary(record: dict) -> dict:
    out = {"run_id": record.get("run_id"), "workflow": record.get("workflow"), "status": record.get("status"),
           "started": record.get("started"), "duration_s": record.get("duration_s"), **verdicts.for_list(record)}
    if record.get("unreadable"):  # a damaged record: listed with the reason, never read further
        out["unreadable"] = record["unreadable"]
    if is_plan_record(record):  # a plan's run: its label and its steps' workflows
        plan = record["plan"] if isinstance(record.get("plan"), dict) else {}
        out.update(kind="plan", plan=plan.get("label"),
                   steps=plan.get("steps") if isinstance(plan.get("steps"), dict) else {})
    return out


def _plan_facts(ctx: ActionContext, run_dir: Path, record: dict) -> dict:
    """A plan's run: {kind, plan (its label), steps: [{name, workflow, version}] in the plan's order, edges:
    ['bench.dataset ← clean.cleaned']}; {} for one workflow's run."""
    plan = read_plan(run_dir, ctx.registry, record, contracts=False)
    if plan is None:
        return {}
    return {"kind": "plan", "plan": plan.label, "steps": [s.as_json() for s in plan.steps],
            "edges": [e.text for e in plan.edges]}


def _record(run_dir: Path) -> dict:
    """run.json's record; Refused naming the reason when it is damaged (the other runs are not affected)."""
    record, problem = runstore.load_run(run_dir)
    if not record:
        raise Refused("unreadable_run", f"the record of run {run_dir.name} cannot be read: {problem}",
                      "tell the researcher; the other runs are not affected (list_runs shows them)")
    return record


# ---- the actions ---------------------------------------------------------------------------------
def list_runs(ctx: ActionContext, args: ListRunsArgs):
    records = runstore.list_runs(ctx.settings.runs_dir)
    if args.workflow:  # a plan's run ran the workflows of its steps
        records = [r for r in records if r.get("workflow") == args.workflow
                   or args.workflow in (_summary(r).get("steps") or {}).values()]
    if args.status:
        records = [r for r in records if r.get("status") == args.status]
    records.sort(key=lambda r: (r.get("started") or "", r.get("run_id") or ""), reverse=True)
    runs = [_summary(r) for r in records[:args.limit]]
    return ({"runs": runs, "total": len(records)},
            f"listed runs: {len(runs)} of {len(records)}" + (f" ({args.workflow})" if args.workflow else ""), None)


def run_status(ctx: ActionContext, args: RunArgs):
    run_dir = _run_dir(ctx, args.run_id)
    record = _record(run_dir)
    record.setdefault("run_id", run_dir.name)
    out = _summary(record) | {
        "version": record.get("version"), "invocation_id": record.get("invocation_id"),
        "ended": record.get("ended"), "progress": record.get("progress"),
        "params": _shown_params(ctx, run_dir),
        "outputs": [{"name": o.get("name"), "path": o.get("path"), "exists": o.get("exists")}
                    for o in record.get("outputs") or []]}
    if record.get("parent_run"):
        out["fork_of"] = record["parent_run"]
    if refinement_of(record):
        out["refinement"] = refinement_of(record)
    out.update(_plan_facts(ctx, run_dir, record))
    out.pop("failing_checks", None)  # the verdict below names them with their advice
    verdict = verdicts.for_model(record, full=False)
    if verdict is not None:  # the judgement of a finished run: what failed, what it means, which params to look at
        out["verdict"] = verdict
    if record.get("status") not in ("succeeded", "running"):
        # `failure`, as explain_run names it: a result's `error` key is a refusal of the call itself
        failure = record.get("failure") if isinstance(record.get("failure"), dict) else {}
        message = failure.get("message") or record.get("error")
        out["failure"] = {"rule": failure.get("rule") or record.get("failed_rule"),
                          "error": cut_line(message) if message else None}
    # a run that did not succeed has nothing judged ("unknown"): its status says it all
    judged = f", verdict {verdict['status']}" if verdict and record.get("status") == "succeeded" else ""
    return out, f"status of run {run_dir.name}: {record.get('status', 'unknown')}{judged}", None


def explain_run(ctx: ActionContext, args: RunArgs):
    run_dir = _run_dir(ctx, args.run_id)
    record = _record(run_dir)
    status = record.get("status", "unknown")
    out: dict[str, Any] = {"run_id": run_dir.name, "workflow": record.get("workflow"), "status": status,
                           "duration_s": record.get("duration_s")}
    out.update(_plan_facts(ctx, run_dir, record))
    verdict = verdicts.for_model(record, full=True)
    if verdict is not None:
        out["verdict"] = verdict
    if record.get("parent_run"):
        out["fork_of"] = record["parent_run"]
        changed = changed_numbers(record, run_dir)
        if changed:  # what the fork's change did to the numbers
            out["changed_from_parent"] = changed
    if refinement_of(record):
        out["refinement"] = refinement_of(record)
    if status == "failed":
        out["failure"] = failure_facts(record, run_dir, ctx.settings.registry_root)
    elif status == "cancelled":
        out["cancelled_by"] = record.get("cancelled_by")
        out["running_jobs"] = record.get("running_jobs")
    for key in ("missing_outputs", "input_changed"):
        if record.get(key):
            out[key] = record[key]
    numbers = key_numbers(record, run_dir)
    if numbers:
        out["key_numbers"] = numbers
    found = diagnostics(run_dir)
    if found:
        out["diagnostics"] = found
    why = out.get("failure", {}).get("rule")
    judged = f", verdict {verdict['status']}" if verdict and status == "succeeded" else ""
    return out, f"explained run {run_dir.name}: {status}{judged}" + (f" in rule {why}" if why else ""), None


def compare_runs(ctx: ActionContext, args: CompareRunsArgs):
    run_a, run_b = _run_dir(ctx, args.a), _run_dir(ctx, args.b)
    wfs = [ctx.registry.get(runstore.read_run(r).get("workflow") or "") for r in (run_a, run_b)]

    def redactor(run_dir, wf):
        plan = read_plan(run_dir, ctx.registry)
        if plan is not None:  # {step: params}, each step by its own contract (none: every value hidden)
            return lambda p: redact_params(plan.scope()[0], p)
        return (lambda p: redact_params(wf.schema, p)) if wf else (lambda p: {k: PLACEHOLDER for k in p})

    outputs = tuple({n: o.model_dump() for n, o in wf.manifest.outputs.items()} if wf else None for wf in wfs)
    diff = compare.diff_runs(run_a, run_b, outputs, redact=(redactor(run_a, wfs[0]), redactor(run_b, wfs[1])))
    verdict = verdicts.changes(runstore.read_run(run_a), runstore.read_run(run_b))
    if verdict is not None:
        diff["verdict"] = verdict
    for entry in diff.get("outputs") or []:
        values = entry.get("values")
        if values and len(values) > VALUE_CHANGES:
            entry["values"] = values[:VALUE_CHANGES] + [{"…": f"{len(values) - VALUE_CHANGES} more"}]
    return diff, (f"compared runs {run_a.name} and {run_b.name}: {len(diff.get('params') or [])} param(s), "
                  f"{len(diff.get('outputs') or [])} output(s) differ"), None


def fork_run(ctx: ActionContext, args: ForkRunArgs):
    parent = _run_dir(ctx, args.run_id)
    if not args.changes:
        raise Refused("bad_arguments", "fork_run needs at least one change",
                      "give `changes` as {param: new value}; to repeat a run unchanged the researcher uses "
                      f"`snakegate rerun {parent.name}`")
    if any(v == PLACEHOLDER for v in args.changes.values()):
        raise Refused("sensitive_value", "a sensitive value cannot be changed through fork_run",
                      "the parent's sensitive values are kept; the researcher changes one in the masked field")
    try:
        plan = plan_fork(ctx.registry, ctx.settings, parent, args.changes)
    except ForkRefused as exc:
        if exc.result is not None:
            errors = gate_errors(exc.result)
            return ({"ok": False, "errors": errors},
                    f"fork of {parent.name}: refused, {len(errors)} problem(s) ({errors[0]['path']})", None)
        raise Refused("fork_" + exc.code, exc.message,
                      "change a parameter that affects a job, or ask the researcher what to change")
    except UserError as exc:
        raise Refused("bad_arguments", exc.message, "name params as describe_workflow lists them")
    fork = ForkOrigin(parent_run=parent.name, parent_invocation_id=plan.parent_invocation_id,
                      changes=dict(plan.changes), changed_rules=tuple(plan.changed_rules))
    if is_plan(plan.invocation):  # a plan run's fork: changes are <step>.<param>, the draft is a plan
        shown, proposal = plan_proposal(ctx, plan.invocation, plan.result, fork=fork)
    else:
        wf = ctx.registry.get(plan.result.workflow)
        shown, proposal = proposal_for(ctx, wf, plan.invocation["params"], plan.result, fork=fork)
    shown["fork_of"] = parent.name
    shown["reruns_rules"] = list(plan.changed_rules)
    return shown, (f"forked run {parent.name} ({', '.join(args.changes)}): passes the gate "
                   f"(invocation {plan.result.invocation_id[:12]}…), re-runs {', '.join(plan.changed_rules)}"), proposal
