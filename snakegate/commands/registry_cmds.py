"""Registry and gate commands: list, show (with the workflows each connects to), search, init (a workflow's
run config template, or a plan's: `init --plan a,b`), validate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from snakegate.contract.dialect import format_path
from snakegate.errors import ExitCode, UserError


def register(sub, epilog: str) -> None:
    p = sub.add_parser("list", help="list the registry's workflows", epilog=epilog)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("show", help="show a workflow, its parameters, outputs and the workflows it connects to",
                       epilog=epilog)
    p.add_argument("id", help="workflow id")
    p.add_argument("--json", action="store_true",
                   help="print the manifest, the contract and the connections (consumers of each output, "
                        "producers of each input file) as JSON")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("search", help="rank workflows by how well they match TEXT", epilog=epilog)
    p.add_argument("text", nargs="+", help="words to look for in id, title, tags, description")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("init", help="write a run config template for a workflow, or for a plan of several",
                       epilog=epilog)
    p.add_argument("id", nargs="?", help="workflow id (or --plan)")
    p.add_argument("--plan", metavar="STEPS",
                   help="write a plan template instead: workflow ids in run order, comma-separated, e.g. "
                        "tabular-profile,classifier-benchmark (`name=id` names a step); an input an earlier "
                        "step's output fits is filled as {from, output}")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout (never overwrites)")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("validate", help="pass a run config through the gate (no job runs)", epilog=epilog)
    p.add_argument("config", help="run config YAML (workflow, version, params)")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object: {"ok", "invocation_id", "workflow", "errors": [{path, code, message, hint}]}')
    p.set_defaults(handler=cmd_validate)


def cmd_list(ctx) -> int:
    reg = ctx.registry
    if ctx.args.json:
        rows = [{"id": wf.id, "version": wf.manifest.version, "title": wf.manifest.title, "trust": wf.manifest.trust,
                 "tags": wf.manifest.tags, "tools": [t.name for t in wf.manifest.tools]}
                for wf in (reg.workflows[i] for i in reg.ids())]
        print(json.dumps({"workflows": rows, "broken": reg.broken}, indent=2, sort_keys=True))
        return ExitCode.OK
    if not reg.workflows and not reg.broken:
        print(f"no workflows in {reg.root / 'workflows'}")
    width = max((len(i) for i in reg.ids()), default=10)
    from snakegate.commands.workflow_view import tools_text

    for wf_id in reg.ids():
        m = reg.workflows[wf_id].manifest
        print(f"{wf_id:<{width}}  {m.version:<8} {m.trust:<9} {m.title}")
        if m.tools:  # under the title: what else the machine needs (`snakegate show ID` says how to get it)
            print(f"{'':<{width + 2 + 9 + 10}}needs {tools_text(m.tools)}")
    for name, message in sorted(reg.broken.items()):
        print(f"{name:<{width}}  (cannot load: {message.splitlines()[0]})", file=sys.stderr)
    return ExitCode.OK


def connections(registry, wf) -> dict:
    """{"consumers": {output: [links]}, "producers": {param: [links]}}: which workflows can take each output,
    and make each input file, by declared type (snakegate.registry.links)."""
    from snakegate.registry import links

    return {"consumers": {o: links.consumers(registry, wf.id, o) for o in wf.manifest.outputs},
            "producers": {p: links.producers(registry, wf.id, p) for p in links.inputs(wf.schema)}}


def cmd_show(ctx) -> int:
    from snakegate.commands.workflow_view import connection_lines, show_lines

    wf = ctx.workflow(ctx.args.id)
    m = wf.manifest
    found = connections(ctx.registry, wf)
    if ctx.args.json:
        shown = {side: {k: [link.as_dict() for link in v] for k, v in by.items()} for side, by in found.items()}
        print(json.dumps({"manifest": m.model_dump(), "schema": wf.schema, "connections": shown}, indent=2,
                         sort_keys=True))
        return ExitCode.OK
    import shutil

    examples = [str(p.relative_to(ctx.registry.root)) for p in wf.examples()]
    on_path = {t.name: shutil.which(t.version_command[0] if t.version_command else t.name) is not None
               for t in m.tools}
    print("\n".join(show_lines(m, wf.schema, examples, on_path=on_path)
                    + connection_lines(found["consumers"], found["producers"])))
    return ExitCode.OK


def cmd_search(ctx) -> int:
    hits = ctx.registry.search(" ".join(ctx.args.text))
    hits = [(wf, score) for wf, score in hits if score > 0]
    if not hits:
        print("no workflow matches; `snakegate list` shows them all")
        return ExitCode.INVALID
    for wf, score in hits:
        print(f"{wf.id:<24} {score:5.1f}  {wf.manifest.title}")
    return ExitCode.OK


def plan_steps(ctx, spec: str) -> list:
    """`--plan a,b` (or `clean=a,bench=b`) as [(step name, Workflow)] in run order; UserError naming the item."""
    from snakegate.plan.config import STEP_NAME
    from snakegate.registry.links import step_name

    items = [item.strip() for item in spec.split(",") if item.strip()]
    if not items:
        raise UserError("--plan needs workflow ids, comma-separated, e.g. --plan tabular-profile,classifier-benchmark",
                        ExitCode.USAGE)
    steps, taken = [], set()
    for item in items:
        name, _, wf_id = item.rpartition("=")
        wf = ctx.workflow(wf_id.strip())
        name = name.strip() or step_name(wf.id, taken)
        if not STEP_NAME.match(name) or "__" in name or name in taken:
            why = "is used twice" if name in taken else \
                "must be 1-32 lowercase letters, digits or single underscores, starting with a letter"
            raise UserError(f"--plan: step name `{name}` {why}; e.g. --plan clean=tabular-profile,"
                            "bench=classifier-benchmark", ExitCode.USAGE)
        taken.add(name)
        steps.append((name, wf))
    return steps


def cmd_init(ctx) -> int:
    from snakegate.config.template import plan_template, run_config_template

    if bool(ctx.args.id) == bool(ctx.args.plan):
        raise UserError("give one workflow id, or --plan with several (e.g. snakegate init --plan "
                        "tabular-profile,classifier-benchmark), not both" if ctx.args.id else
                        "name a workflow (snakegate init tabular-profile) or a plan (snakegate init --plan "
                        "tabular-profile,classifier-benchmark)", ExitCode.USAGE)
    if ctx.args.plan:
        text = plan_template(plan_steps(ctx, ctx.args.plan))
    else:
        text = run_config_template(ctx.workflow(ctx.args.id), ctx.registry.root)
    if not ctx.args.output:
        sys.stdout.write(text)
        return ExitCode.OK
    out = Path(ctx.args.output)
    try:
        with open(out, "x", encoding="utf-8") as fh:  # "x": never overwrite, even a file created a moment ago
            fh.write(text)
    except FileExistsError:
        raise UserError(f"{out} already exists; choose another -o path or remove it first (nothing was overwritten)")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror}")
    print(f"wrote {out}; edit the params, then `snakegate validate {out}`")
    return ExitCode.OK


def print_gate_result(result, source: str, stream=None) -> None:
    stream = stream or sys.stdout  # looked up at call time: callers may have redirected stdout since import
    plan = hasattr(result, "order")  # a plan's result (snakegate.plan.prove.PlanResult)
    if result.ok and plan:
        print(f"ok: {source} passes the gate — plan{' ' + result.label if result.label else ''} of "
              f"{len(result.order)} steps, invocation {result.invocation_id}", file=stream)
        for name in result.order:
            step = result.steps[name]
            takes = ", ".join(f"{format_path(r.parts)} from {r.source}.{r.output}" for r in result.refs.get(name, []))
            print(f"  {name}: {step.workflow} {step.invocation.version}" + (f" ({takes})" if takes else ""),
                  file=stream)
        return
    if result.ok:
        print(f"ok: {source} passes the gate — {result.workflow} {result.invocation.version}, "
              f"invocation {result.invocation_id}", file=stream)
        return
    n = len(result.errors)
    from snakegate.commands.layout import wrap

    head = (f"refused: {source} has {n} problem{'s' if n != 1 else ''}"
            + (f" (workflow {result.workflow})" if result.workflow else " (a plan)" if plan else ""))
    print("\n".join(wrap(head, indent=2, first="")), file=stream)
    from snakegate.commands.refusal_text import refusal_lines

    for line in refusal_lines(result.errors):
        print(line, file=stream)


def validate_file(ctx, path: str):
    from snakegate.gate.prove import gate
    from snakegate.models import GateResult
    from snakegate.config.read import read_run_config

    data, yaml_error = read_run_config(path)
    if yaml_error is not None:
        return GateResult(ok=False, errors=[yaml_error])
    from snakegate.plan.config import is_plan

    if is_plan(data):
        from snakegate.plan.prove import gate_plan

        return gate_plan(ctx.registry, data, ctx.settings)
    return gate(ctx.registry, data, ctx.settings)


def cmd_validate(ctx) -> int:
    result = validate_file(ctx, ctx.args.config)
    if ctx.args.json:
        print(json.dumps(result.summary_json(), indent=2, sort_keys=True))
    else:
        print_gate_result(result, ctx.args.config)
    return ExitCode.OK if result.ok else ExitCode.INVALID
