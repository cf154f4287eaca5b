"""The commands that run a run again: `rerun` (the same invocation, its pinned workflow copy; compares the
outputs) and `fork` (--set changes, and for a plan --replace/--add steps; re-runs only what they affect).

Check the arguments, hand the invocation to the runner, shape the answer; the gate and the runner decide.
"""

from __future__ import annotations

import sys
from pathlib import Path

from snakegate.commands.prov_common import declared_outputs, run_folder, workflow_of
from snakegate.errors import ExitCode, UserError


def parent_invocation(run_dir: Path) -> dict:
    """The run config a run was started with (see snakegate.run.fork.parent_invocation)."""
    from snakegate.run.fork import parent_invocation as core
    return core(run_dir)


def _pin_of(run_dir: Path) -> Path | None:
    from snakegate.run.pinning import has_copy
    return run_dir if has_copy(run_dir) else None


def _plan_rule_order(run_dir: Path) -> dict[str, int]:
    from snakegate.provenance import runstore

    steps = (runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}).get("steps") or {}
    order: dict[str, int] = {}
    for name in steps:
        manifest = run_dir / "steps" / name / "workflow" / "workflow.yaml"
        try:
            import yaml

            rules = (yaml.safe_load(manifest.read_text()) or {}).get("rules") or {}
        except (OSError, ValueError):
            rules = {}
        for rule in rules:
            order[f"{name}__{rule}"] = len(order)
    return order


def parse_set(text: str) -> tuple[list[str], object]:
    """'a.b=value' -> (['a', 'b'], value read as YAML)."""
    from snakegate.config.read import parse_yaml

    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UserError(f"--set expects KEY=VALUE, e.g. --set missing_strategy=fill_mean (got {text!r})")
    key = key.removeprefix("params.")
    parts = key.split(".")
    if any(not p for p in parts):
        raise UserError(f"--set {text!r}: {key!r} is not a parameter name (empty part in the dotted key)")
    value, error = parse_yaml(raw, f"the value of --set {key}")
    if error is not None:
        raise UserError(f"{error.message}; quote the value if it is text")
    return parts, value


def apply_set(params: dict, parts: list[str], value) -> None:
    from snakegate.run.fork import apply_change
    try:
        apply_change(params, parts, value)
    except UserError as exc:
        raise UserError(f"--set {exc.message}") from None


def _contract_of(ctx, run_dir: Path) -> dict | None:
    """The run's contract: its workflow's schema, or for a plan's run one schema with a property per step."""
    from snakegate.views.plan import read as read_plan

    plan = read_plan(run_dir, ctx.registry)
    if plan is not None:
        return plan.scope()[0]
    wf = workflow_of(ctx, run_dir)
    return wf.schema if wf is not None else None


def cmd_rerun(ctx) -> int:
    from snakegate.commands.run_cmds import exit_for, options_from, run_and_report
    from snakegate.provenance import compare

    parent = run_folder(ctx, ctx.args.run)
    invocation = parent_invocation(parent)
    # the parent's own workflow copy, so a rerun repeats what ran even after the registry moved on
    outcome = run_and_report(ctx, invocation, options_from(ctx.args), f"rerun of run {parent.name}",
                             extra_record={"rerun_of": parent.name}, pinned_from=_pin_of(parent))
    if outcome.status != "succeeded":
        return exit_for(outcome.status)
    status = compare.output_status(parent, outcome.run_dir, declared_outputs(workflow_of(ctx, outcome.run_dir)))
    for name, state in status.items():
        print(f"  {name:<20} {state}")
    differs = [n for n, s in status.items() if s != "identical"]
    if differs:
        print(f"not reproduced: {len(differs)} of {len(status)} outputs differ from run {parent.name} "
              f"({', '.join(differs)}); `snakegate diff {parent.name} {outcome.run_id}` shows how")
        return ExitCode.INVALID
    print(f"reproduced: all {len(status)} outputs are byte-identical to run {parent.name}")
    return ExitCode.OK


def cmd_fork(ctx) -> int:
    from snakegate.commands.registry_cmds import print_gate_result
    from snakegate.commands.run_cmds import exit_for, options_from, run_and_report
    from snakegate.run.fork import ForkRefused, plan_fork

    from snakegate.commands.set_values import as_contract_says

    parent = run_folder(ctx, ctx.args.run)
    schema = _contract_of(ctx, parent)
    changes = {}
    for text in ctx.args.sets:
        parts, value = parse_set(text)
        changes[".".join(parts)] = as_contract_says(schema, parts, value)  # `columns=a,b` for a list: [a, b]
    steps = {}
    for flag, texts in (("--replace", ctx.args.replaces), ("--add", ctx.args.adds)):
        for text in texts:
            step, sep, workflow = text.partition("=")
            if not sep or not step.strip() or not workflow.strip():
                raise UserError(f"{flag} expects STEP=WORKFLOW, e.g. {flag} bench=surrogate-design (got {text!r})")
            steps[step.strip()] = workflow.strip()
    if not changes and not steps:
        raise UserError("fork needs a change: --set KEY=VALUE (or, for a plan, --replace/--add STEP=WORKFLOW)")
    source = f"fork of run {parent.name}"
    try:
        plan = plan_fork(ctx.registry, ctx.settings, parent, changes, steps)
    except ForkRefused as exc:
        if exc.result is not None:
            print_gate_result(exc.result, source, stream=sys.stderr)
            raise UserError("nothing was run", ExitCode.INVALID) from None
        raise
    from snakegate.commands.layout import wrap
    from snakegate.views.params import value_text

    changed = ", ".join(f"{k}={value_text(v, nested=True)}" for k, v in changes.items())
    print("\n".join(wrap(f"fork of run {parent.name}: {changed} changes rule(s) {', '.join(plan.changed_rules)}; "
                         "those and their downstream jobs re-run, the rest is copied from the parent", indent=2)))
    options = options_from(ctx.args, forcerun=plan.changed_rules, seed_from=parent)
    outcome = run_and_report(ctx, plan.invocation, options, source, extra_record=plan.record(),
                             pinned_from=_pin_of(parent))
    wf = workflow_of(ctx, outcome.run_dir)  # the fork's own copy: the registry may no longer hold it
    # in the manifest's rule order, not the order the scheduler happened to pick for independent jobs
    # (a plan: in the plan's step order, each step's rules in its manifest's order)
    order = {rule: i for i, rule in enumerate(wf.manifest.rules)} if wf else _plan_rule_order(outcome.run_dir)
    executed = sorted(outcome.record.get("jobs_executed") or [], key=lambda r: (order.get(r, len(order)), r))
    print(f"  re-executed {len(executed)} job(s): {', '.join(executed) or 'none'}")
    return exit_for(outcome.status)
