"""`snakegate diff RUN_A RUN_B`: two runs' parameters (x-sensitive values hidden), output hashes, changed JSON
values and table rows, plan steps, and the verdict's change, as text or JSON.

Reads the two run folders through provenance.compare; writes nothing.
"""

from __future__ import annotations

import json

from snakegate.commands.prov_common import declared_outputs, run_folder, workflow_of
from snakegate.errors import ExitCode, UserError


def cmd_diff(ctx) -> int:
    from snakegate.provenance import compare, runstore, secrets
    from snakegate.views import verdict as verdicts

    from snakegate.views.plan import read as read_plan

    run_a, run_b = run_folder(ctx, ctx.args.run_a), run_folder(ctx, ctx.args.run_b)
    wfs = (workflow_of(ctx, run_a), workflow_of(ctx, run_b))
    plans = (read_plan(run_a, ctx.registry), read_plan(run_b, ctx.registry))

    def key() -> bytes:
        try:
            return secrets.registry_key(ctx.settings.registry_root)
        except secrets.SecretKeyError as exc:
            raise UserError(str(exc)) from None

    def redactor(wf, plan):
        # a plan: {step: params}, each step by its own contract (a step without one is hidden whole)
        schema = plan.scope()[0] if plan is not None else wf.schema if wf is not None else None
        # a workflow gone from the registry: hide every value rather than risk showing a secret
        if schema is None:
            return lambda params: {k: v if secrets.is_keyed_hash(v) else secrets.keyed_hash(key(), v)
                                   for k, v in params.items()}
        return lambda params: (secrets.redact(schema, params, key())[0]
                               if secrets.sensitive_values(schema, params) else params)

    result = compare.diff_runs(run_a, run_b, (declared_outputs(wfs[0]), declared_outputs(wfs[1])),
                               redact=(redactor(wfs[0], plans[0]), redactor(wfs[1], plans[1])))
    verdict = verdicts.changes(runstore.read_run(run_a), runstore.read_run(run_b))
    if verdict is not None:
        result["verdict"] = verdict
    if ctx.args.json:
        print(json.dumps(result, indent=2, sort_keys=True, default=str))
        return ExitCode.OK
    print(f"diff {run_a.name} -> {run_b.name}")
    if result.get("kind") == "plan":
        _print_plan_diff(result)
    else:
        if result["workflow"][0] != result["workflow"][1] or result["version"][0] != result["version"][1]:
            print(f"  workflow: {result['workflow'][0]} {result['version'][0]} -> "
                  f"{result['workflow'][1]} {result['version'][1]}")
        _print_changes(result, "")
    if verdict is not None:  # the judgement last, after the params and outputs that explain it
        from snakegate.commands.layout import wrap

        for line in verdicts.change_lines(verdict):
            indent = len(line) - len(line.lstrip())
            print("\n".join(wrap(line.strip(), indent=indent + 4, first=" " * indent)))
    return ExitCode.OK


def _print_changes(part: dict, indent: str) -> None:
    """A diff's (or one step's) changed params and outputs."""
    if part["params"]:
        print(f"{indent}parameters ({len(part['params'])} changed):")
        for c in part["params"]:
            print(f"{indent}  {c['path']}: {_show(c.get('a', '(absent)'))} -> {_show(c.get('b', '(absent)'))}")
    else:
        print(f"{indent}parameters: identical")
    if part["outputs"]:
        print(f"{indent}outputs ({len(part['outputs'])} differ, {len(part['identical_outputs'])} identical):")
        for o in part["outputs"]:
            _print_output_change(o, indent)
    else:
        print(f"{indent}outputs: all {len(part['identical_outputs'])} identical")


def _print_plan_diff(result: dict) -> None:
    """Two plans' runs, step by step: what changed in each step (compare._diff_plans)."""
    labels = result.get("plan") or [None, None]
    if labels[0] != labels[1]:
        print(f"  plan: {labels[0] or '(no label)'} -> {labels[1] or '(no label)'}")
    steps = result.get("steps") or []
    changed = [s for s in steps if s["status"] != "identical"]
    print(f"steps ({len(changed)} of {len(steps)} changed):")
    for step in steps:
        (wa, wb), (va, vb) = step["workflow"], step["version"]
        what = f"{wa} {va}" if (wa, va) == (wb, vb) else \
            f"{wa or '(absent)'} {va or ''}".rstrip() + " -> " + f"{wb or '(absent)'} {vb or ''}".rstrip()
        if step["status"] == "identical":
            print(f"step {step['name']} ({what}): identical (parameters, and all {len(step['identical_outputs'])} "
                  "outputs)")
            continue
        print(f"step {step['name']} ({what}): {step['status']}")
        if step["status"] == "changed":
            _print_changes(step, "  ")


def _print_output_change(o: dict, indent: str = "") -> None:
    from snakegate.commands.layout import width, wrap
    from snakegate.provenance import tablediff

    values, table = o.get("values"), o.get("table")
    if table:
        extra = f": {tablediff.summary(table)}"
    else:
        extra = f" ({len(values)} value(s) changed)" if values else ""
    print("\n".join(wrap(f"{o['path']} {o['status']}{extra}", indent=6 + len(indent),
                          first=f"{indent}  {o['name']}: ")))
    lines = [f"{v['path']}: {_show(v.get('a', '(absent)'))} -> {_show(v.get('b', '(absent)'))}"
             for v in (values or [])[:20]]
    more = len(values) - 20 if values and len(values) > 20 else 0
    if table:
        lines = [tablediff.example_text(e) for e in table["examples"]]
        more = table["rows_added"] + table["rows_removed"] + table["rows_changed"] - len(lines)
    for line in lines:
        print(_cut(f"{indent}      {line}", width()))
    if more > 0:
        print(f"{indent}      … {more} more (use --json)")


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _show(value) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) or value == "(absent)" else repr(value)
    if value == "(absent)":
        return "(absent)"
    return text if len(text) <= 60 else text[:57] + "…"
