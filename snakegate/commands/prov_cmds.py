"""Provenance commands: prov, verify, rerun, fork, export (diff: snakegate.commands.diff_cmds).

Each reads a run folder's records (runs/<run_id>/), calls the provenance layer
or the runner, and shapes the answer. RUN is a run id, a unique prefix of one,
or 'latest'.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from snakegate.errors import ExitCode, UserError

RUN_HELP = "run id, unique prefix, or 'latest'"
FORMATS = {"provn": "prov.provn", "json": "prov.json", "ttl": "prov.ttl"}


def register(sub, epilog: str) -> None:
    from snakegate.commands.run_cmds import add_snakemake_options

    p = sub.add_parser("prov", help="print or query a run's W3C PROV record", epilog=epilog,
                       description="Print runs/<run_id>/prov.<format>: PROV-N (default), PROV-JSON or PROV-O Turtle; "
                                   "or answer one question from it with a named SPARQL query (rdflib).")
    p.add_argument("run", help=RUN_HELP)
    ask = p.add_mutually_exclusive_group()
    ask.add_argument("--format", choices=sorted(FORMATS), default=None, help="serialisation (default provn)")
    ask.add_argument("--who", action="store_true", help="the people and software behind the run, with roles and versions")
    ask.add_argument("--inputs", action="store_true", help="the files the run used that none of its jobs made")
    ask.add_argument("--outputs", action="store_true", help="the files the run's jobs made")
    ask.add_argument("--derived", metavar="FILE", help="what FILE was made by and derived from, and what derives from it")
    p.add_argument("--json", action="store_true", help="print a query's answer as JSON")
    p.set_defaults(handler=cmd_prov)

    p = sub.add_parser("verify", help="re-hash a run's recorded files and workflow folder, or an exported crate",
                       epilog=epilog,
                       description="Re-hash every file the run's PROV record lists and the workflow folder; "
                                   "exit 1 naming each file that changed or went missing. Given an RO-Crate "
                                   "(`snakegate export` wrote it: a folder or a .zip), re-hash every file its "
                                   "metadata describes against the sha256 and size it records.")
    p.add_argument("run", help=RUN_HELP + ", or the path of an exported RO-Crate (folder or .zip)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("rerun", help="run the same invocation again and compare the outputs", epilog=epilog,
                       description="Run the run's invocation again into a new run folder (the gate proves it is the "
                                   "same invocation) and report per output whether the bytes are identical. "
                                   "Exit 0 when every output is identical, 1 when one differs or the run failed.")
    p.add_argument("run", help=RUN_HELP)
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_rerun, passes_to_snakemake=True)

    p = sub.add_parser("fork", help="run a run again with changed parameters (re-runs only what they affect)",
                       epilog=epilog,
                       description="Build a new invocation from the run's with --set changes, gate it, copy the "
                                   "parent's outputs in and re-run only the jobs downstream of the change. The "
                                   "new invocation is recorded as prov:wasDerivedFrom the parent's.")
    p.add_argument("run", help=RUN_HELP)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter change; VALUE is read as YAML (fill_mean, 3, true, [a, b], "
                        "{from: clean, output: cleaned}); dotted keys reach nested params; for a plan, "
                        "STEP.PARAM=VALUE (repeatable)")
    p.add_argument("--replace", dest="replaces", action="append", default=[], metavar="STEP=WORKFLOW",
                   help="a plan: run WORKFLOW in STEP instead (its params start afresh: give them with --set)")
    p.add_argument("--add", dest="adds", action="append", default=[], metavar="STEP=WORKFLOW",
                   help="a plan: add a step running WORKFLOW (give its params with --set STEP.PARAM=...)")
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_fork, passes_to_snakemake=True)

    p = sub.add_parser("export", help="export a run as a Workflow Run RO-Crate (Provenance Run Crate)",
                       epilog=epilog)
    p.add_argument("run", help=RUN_HELP)
    p.add_argument("--ro-crate", dest="ro_crate", required=True, metavar="DIR|ZIP",
                   help="a new or empty folder, or a path ending in .zip")
    p.add_argument("--license", default=None, metavar="URL",
                   help="license of the crate's metadata (default https://spdx.org/licenses/MIT)")
    p.add_argument("--validate", action="store_true",
                   help="check the crate with roc-validator (Provenance Run Crate 0.5, REQUIRED checks)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing ZIP, or a folder that holds an earlier RO-Crate")
    p.set_defaults(handler=cmd_export)


# ---- helpers -------------------------------------------------------------------------------------
def _run(ctx, ref: str) -> Path:
    from snakegate.commands.run_cmds import find_run_or_fail
    return find_run_or_fail(ctx, ref)


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def parent_invocation(run_dir: Path) -> dict:
    """The run config a run was started with (see snakegate.run.fork.parent_invocation)."""
    from snakegate.run.fork import parent_invocation as core
    return core(run_dir)


def _workflow_of(ctx, run_dir: Path):
    """The workflow a run executed (its run folder's copy, else the registry's; None when gone)."""
    from snakegate.views.facts import workflow_of
    return workflow_of(ctx.registry, run_dir)


def _plan_of(ctx, run_dir: Path) -> tuple[list, list] | None:
    """A plan's run: ([(step, manifest, schema, its workflow copy's folder)] in the plan's order, [(step, param,
    source step, output)]); None for one workflow's run. A step whose copy is gone is refused by name."""
    from snakegate.run import pinning, plan_run
    from snakegate.views.plan import read as read_plan

    plan = read_plan(run_dir, ctx.registry)
    if plan is None:
        return None
    steps = []
    for step in plan.steps:
        try:
            wf = plan_run.load_copies(run_dir, {"steps": {step.name: {"workflow": step.workflow}}})[step.name]
        except pinning.PinError as exc:
            raise UserError(f"step {step.name} of run {run_dir.name} has no workflow copy to put in the crate: {exc}",
                            ExitCode.INVALID) from None
        steps.append((step.name, wf.manifest.model_dump(), wf.schema, wf.folder))
    if not steps:
        raise UserError(f"the steps of plan run {run_dir.name} cannot be read from its invocation.json; the crate "
                        "needs them", ExitCode.INVALID)
    return steps, [(e.step, e.param, e.source, e.output) for e in plan.edges]


def _contract_of(ctx, run_dir: Path) -> dict | None:
    """The run's contract: its workflow's schema, or for a plan's run one schema with a property per step."""
    from snakegate.views.plan import read as read_plan

    plan = read_plan(run_dir, ctx.registry)
    if plan is not None:
        return plan.scope()[0]
    wf = _workflow_of(ctx, run_dir)
    return wf.schema if wf is not None else None


def _pin_of(run_dir: Path) -> Path | None:
    from snakegate.run.pinning import has_copy
    return run_dir if has_copy(run_dir) else None


def _outputs(wf) -> dict | None:
    return {name: out.model_dump() for name, out in wf.manifest.outputs.items()} if wf else None


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


# ---- commands ------------------------------------------------------------------------------------
def cmd_prov(ctx) -> int:
    from snakegate.provenance import runstore
    from snakegate.provenance.compare import ProvMissing
    from snakegate.provenance.document import RENDERINGS, ensure_rendering
    run_dir = _run(ctx, ctx.args.run)
    args = ctx.args
    if args.who or args.inputs or args.outputs or args.derived is not None:
        from snakegate.commands.prov_query import answer
        return answer(ctx, run_dir)
    if args.json:
        raise UserError("--json goes with a question (--who, --inputs, --outputs, --derived FILE); "
                        "for the record as JSON use --format json")
    path = run_dir / FORMATS[args.format or "provn"]
    if path.name in RENDERINGS and not path.is_file() and (run_dir / "prov.json").is_file():
        try:
            path = ensure_rendering(run_dir, path.name)  # a big run defers these until someone asks
        except ProvMissing as exc:
            raise UserError(str(exc), ExitCode.INVALID) from None
    if not path.is_file():
        record = runstore.read_run(run_dir)
        detail = f"; the last attempt failed: {record['provenance_error']}" if record.get("provenance_error") else ""
        raise UserError(f"run {run_dir.name} has no {path.name} (status: {record.get('status', 'unknown')}); "
                        f"the PROV record is written when Snakemake finishes the run{detail}", ExitCode.INVALID)
    sys.stdout.write(path.read_text(encoding="utf-8"))
    return ExitCode.OK


def cmd_verify(ctx) -> int:
    from snakegate.provenance import compare
    from snakegate.provenance.rocrate import verify as crates
    from snakegate.run import integrity

    if crates.is_crate(Path(ctx.args.run)):
        return _verify_crate(ctx, Path(ctx.args.run))
    run_dir = _run(ctx, ctx.args.run)
    try:
        result = compare.verify(run_dir, ctx.settings.registry_root)
    except compare.ProvMissing as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None
    record = integrity.check_record(run_dir, ctx.settings.registry_root)
    ok = result.ok and record.ok
    seal = record.seal
    if ctx.args.json:
        print(json.dumps({"run": run_dir.name, "ok": ok, "checked": result.checked,
                          "mismatches": [m.__dict__ for m in result.mismatches],
                          "sources_changed": [m.__dict__ for m in result.sources_changed],
                          "record_problems": record.problems,
                          "seal": {"state": seal.state, "sha256": seal.seal_sha256, "problems": seal.problems,
                                   "added_later": seal.later}}, indent=2, sort_keys=True))
        return ExitCode.OK if ok else ExitCode.INVALID
    if result.ok:
        print(f"ok: run {run_dir.name} — all {result.checked} recorded files and the workflow folder match "
              "their recorded hashes")
    else:
        print(f"changed: run {run_dir.name} — {len(result.mismatches)} of {result.checked} recorded items no longer "
              "match:")
        for m in result.mismatches:
            print(f"  - {m.sentence()}")
    if result.sources_changed:
        print("the data roots moved on since (the run read its own staged copies, which are intact):")
        for m in result.sources_changed:
            print(f"  - {m.sentence()}")
    if record.problems:
        print(f"the record does not prove itself ({len(record.problems)} problem(s)):")
        for sentence in record.problems:
            print(f"  - {sentence}")
    if seal.state == "intact":
        print(f"sealed: seal {seal.seal_sha256[:16]}… holds and is the one in the registry's run index"
              + (f" ({', '.join(seal.later)} added since, as expected)" if seal.later else ""))
    elif seal.state == "unindexed":
        print(f"sealed, not indexed: seal {seal.seal_sha256[:16]}… holds, but this registry's run index has no seal "
              "for the run (brought from elsewhere?), so a record rewritten together with its seal would pass; "
              "compare the seal with the one you kept")
    elif seal.state == "unsealed":
        print("unsealed: the run has no seal (made before runs were sealed, or it never finished), so edits to its "
              "record cannot be detected")
    else:
        print(f"seal broken ({len(seal.problems)} problem(s)):")
        for sentence in seal.problems:
            print(f"  - {sentence}")
    return ExitCode.OK if ok else ExitCode.INVALID


def _verify_crate(ctx, path: Path) -> int:
    from snakegate.provenance.rocrate import verify as crates

    try:
        check = crates.verify_crate(path)
    except crates.CrateUnreadable as exc:
        raise UserError(f"{exc}; give a crate `snakegate export` wrote (a folder or a .zip)", ExitCode.INVALID) from None
    if ctx.args.json:
        print(json.dumps({"crate": check.crate, "ok": check.ok, "checked": check.checked, "problems": check.problems,
                          "metadata_sha256": check.metadata_sha256}, indent=2, sort_keys=True))
        return ExitCode.OK if check.ok else ExitCode.INVALID
    if check.ok:
        print(f"ok: crate {path} — all {check.checked} files match the sha256 and size its metadata records, and "
              "the run's PROV record agrees")
    else:
        print(f"changed: crate {path} — {len(check.problems)} problem(s) in {check.checked} described files:")
        for sentence in check.problems:
            print(f"  - {sentence}")
    print(f"metadata sha256 {check.metadata_sha256} (compare it with the one you kept when you exported the crate: "
          "a crate rewritten whole, metadata included, passes its own checks)")
    return ExitCode.OK if check.ok else ExitCode.INVALID


def cmd_rerun(ctx) -> int:
    from snakegate.commands.run_cmds import exit_for, options_from, run_and_report
    from snakegate.provenance import compare

    parent = _run(ctx, ctx.args.run)
    invocation = parent_invocation(parent)
    # the parent's own workflow copy, so a rerun repeats what ran even after the registry moved on
    outcome = run_and_report(ctx, invocation, options_from(ctx.args), f"rerun of run {parent.name}",
                             extra_record={"rerun_of": parent.name}, pinned_from=_pin_of(parent))
    if outcome.status != "succeeded":
        return exit_for(outcome.status)
    status = compare.output_status(parent, outcome.run_dir, _outputs(_workflow_of(ctx, outcome.run_dir)))
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

    parent = _run(ctx, ctx.args.run)
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
    wf = _workflow_of(ctx, outcome.run_dir)  # the fork's own copy: the registry may no longer hold it
    # in the manifest's rule order, not the order the scheduler happened to pick for independent jobs
    # (a plan: in the plan's step order, each step's rules in its manifest's order)
    order = {rule: i for i, rule in enumerate(wf.manifest.rules)} if wf else _plan_rule_order(outcome.run_dir)
    executed = sorted(outcome.record.get("jobs_executed") or [], key=lambda r: (order.get(r, len(order)), r))
    print(f"  re-executed {len(executed)} job(s): {', '.join(executed) or 'none'}")
    return exit_for(outcome.status)


CRATE_METADATA = "ro-crate-metadata.json"


def _existing_crate(dest: Path, force: bool) -> str | None:
    """What --ro-crate DEST would replace ("zip", "folder", or None for nothing); refuses unless --force, and
    even then a folder that is not an earlier RO-Crate (--force never empties an arbitrary folder)."""
    if dest.suffix.lower() == ".zip" and dest.is_file():
        if not force:
            raise UserError(f"{dest} already exists; add --force to replace it, or give another path "
                            "(nothing was written)")
        return "zip"
    if dest.is_dir() and any(dest.iterdir()):
        if not (dest / CRATE_METADATA).is_file():
            raise UserError(f"{dest} is not empty and holds no RO-Crate; give a new or empty "
                            "folder, or a .zip path (nothing was written)")
        if not force:
            raise UserError(f"{dest} already holds an RO-Crate; add --force to replace it, or give another "
                            "path (nothing was written)")
        return "folder"
    return None


def cmd_export(ctx) -> int:
    from snakegate.provenance import compare
    from snakegate.provenance.rocrate import export as rocrate_export

    from snakegate.provenance import runstore
    from snakegate.run import stale

    run_dir = _run(ctx, ctx.args.run)
    # a run whose processes are gone is completed first (interrupted, its PROV record rebuilt), as `show-run` does
    stale.refresh(ctx.settings, run_dir, runstore.read_run(run_dir))
    license = ctx.args.license or rocrate_export.DEFAULT_LICENSE
    root = ctx.settings.registry_root
    plan = _plan_of(ctx, run_dir)
    if plan is not None:  # the plan the main workflow, each step's workflow (its run-folder copy) a part of it
        from snakegate.provenance.rocrate.plan_crate import export_plan

        steps, edges = plan
        write = lambda target: export_plan(run_dir, root, target, steps, edges, license=license)  # noqa: E731
    else:
        wf = _workflow_of(ctx, run_dir)
        if wf is None:
            raise UserError(f"the workflow of run {run_dir.name} is no longer in the registry at "
                            f"{ctx.settings.registry_root}; the crate needs its folder", ExitCode.INVALID)
        write = lambda target: rocrate_export.export(run_dir, root, target, wf.manifest.model_dump(),  # noqa: E731
                                                     wf.schema, wf.folder, license=license)
    dest = Path(ctx.args.ro_crate)
    replace = _existing_crate(dest, ctx.args.force)
    target = dest.with_name(f".{dest.name}.new-{os.getpid()}") if replace == "folder" else dest
    try:
        write(target)
    except (compare.ProvMissing, rocrate_export.ExportError) as exc:
        if target != dest:
            shutil.rmtree(target, ignore_errors=True)  # a half-written new crate never stays behind
        raise UserError(str(exc), ExitCode.INVALID if isinstance(exc, compare.ProvMissing) else ExitCode.USAGE) \
            from None
    if replace == "folder":  # the new crate is complete: swap it in, then drop the old one
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        os.replace(dest, old)
        os.replace(target, dest)
        shutil.rmtree(old, ignore_errors=True)
    print(f"wrote the Workflow Run RO-Crate (Provenance Run Crate 0.5) of run {run_dir.name} to {dest}")
    if ctx.args.validate:
        from snakegate.provenance.rocrate import validate as rocval
        try:
            problems = rocrate_export.validate(dest)
        except rocval.ValidatorMissing as exc:
            raise UserError(f"--validate: {exc}; the crate itself was written") from None
        except rocval.ValidatorFailed as exc:
            raise UserError(f"--validate: {exc}; the crate itself was written", ExitCode.INVALID) from None
        if problems:
            print(f"roc-validator found {len(problems)} problem(s) at REQUIRED severity:")
            for p in problems:
                print(f"  - {p}")
            return ExitCode.INVALID
        print("roc-validator: the crate passes the provenance-run-crate-0.5 profile (REQUIRED checks)")
    return ExitCode.OK
