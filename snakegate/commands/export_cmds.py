"""`snakegate export RUN --ro-crate DIR|ZIP`: a run (one workflow's or a plan's) as a Workflow Run RO-Crate,
written whole or not at all, replacing an earlier crate only with --force, optionally checked with
roc-validator (--validate).

Writes only the crate at the path given (through a temporary sibling); never empties a folder that is not a crate.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from snakegate.commands.prov_common import run_folder, workflow_of
from snakegate.errors import ExitCode, UserError


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

    run_dir = run_folder(ctx, ctx.args.run)
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
        wf = workflow_of(ctx, run_dir)
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
