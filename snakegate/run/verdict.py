"""A finished run's verdict: its workflow's checks (workflow.yaml `evaluate:`) over the outputs in its
folder, written into run.json as `verdict` (snakegate.contract.evaluate says its shape).

`record(run_dir)` is called once a run's end is in run.json and before its PROV record is written and the
folder sealed (so the PROV record carries the verdict and the seal covers it), on every path that ends a
run: the top-level Snakefile's handlers (entry.py, one workflow or a plan), `snakegate run` when they
never ran (runner.py), and a run nobody finished, completed as interrupted (stale.py).

Everything comes from the run folder, never from the registry: the checks from the run's own copy of the
workflow (each step's copy for a plan, whose checks and outputs are named `<step>.<check>`,
`<step>.<output>`), the params from invocation.json (the gated invocation, so a `{param}` threshold is
the value that ran), and each output from under the run folder, read only when its bytes are the ones its
job recorded (runs/<id>/hashes/, snakegate.run.guard): a job killed half-way left no record, so its
half-written file is never judged. A run that did not succeed does not judge an output that is still a
fork's copy of its parent's (its own job may never have run). Those checks, like the checks of an output
that is missing, are `unknown`. No x-sensitive value reaches a check (its threshold or pointer), so none reaches
the record.

Never raises: a verdict that cannot be computed is recorded `unknown` with the reason. Writes run.json only.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.provenance import runstore


def record(run_dir: Path) -> dict | None:
    """Compute the run's verdict and write it into run.json; the verdict, or None when run.json cannot be
    written (the caller's next write says so)."""
    run_dir = Path(run_dir)
    try:
        found = compute(run_dir)
    except Exception as exc:  # noqa: BLE001 - fail closed: a verdict that could not be computed is unknown
        found = {"status": "unknown", "checks": [],
                 "reason": f"the verdict could not be computed ({type(exc).__name__}: {exc})"}
    try:
        runstore.update_run(run_dir, verdict=found)
    except OSError:
        return None
    return found


def compute(run_dir: Path) -> dict:
    """The verdict of the run in `run_dir` (nothing written)."""
    from snakegate.contract.evaluate import overall, verdict
    from snakegate.contract.output_files import reader
    from snakegate.run import pinning

    record = runstore.read_run(run_dir)
    invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
    parents_copies = _parents_copies(run_dir, record)
    if record.get("kind") == "plan" or "steps" in invocation:
        from snakegate.plan.compose import STEPS_DIR

        steps = invocation.get("steps") or {}
        checks = []
        for name, step in steps.items():
            folder = f"{STEPS_DIR}/{name}/"
            try:
                wf = pinning.load_copy(run_dir / folder, str((step or {}).get("workflow")))
            except pinning.PinError as exc:
                return {"status": "unknown", "checks": [], "reason": f"step {name}: {exc}"}
            files = _files(run_dir, wf.manifest, folder, f"{name}.", parents_copies)
            params = _without_secrets(wf.schema, (step or {}).get("params") or {})
            checks += verdict(wf.manifest, params, reader(files), prefix=f"{name}.")["checks"]
        return {"status": overall(checks), "checks": checks}
    try:
        wf = pinning.load_copy(run_dir, str(invocation.get("workflow") or record.get("workflow")))
    except pinning.PinError as exc:
        return {"status": "unknown", "checks": [], "reason": str(exc)}
    files = _files(run_dir, wf.manifest, "", "", parents_copies)
    return verdict(wf.manifest, _without_secrets(wf.schema, invocation.get("params") or {}), reader(files))


def _without_secrets(schema: dict, params: dict) -> dict:
    """The params less every x-sensitive value: a check can never copy one into the record (a threshold or a
    pointer item naming one is unknown, "no value in this run")."""
    import copy

    from snakegate.provenance.secrets import sensitive_values

    out = copy.deepcopy(params)
    for parts in sorted(sensitive_values(schema, params), key=len, reverse=True):
        target = out
        for part in parts[:-1]:
            target = target[part]
        if isinstance(target, dict):
            target.pop(parts[-1], None)
        elif isinstance(target, list):
            target[parts[-1]] = None
    return out


def _files(run_dir: Path, manifest, folder: str, prefix: str, parents_copies: set[str]) -> dict:
    """Every declared output with one path: where it is in the run folder and the sha256 its job recorded."""
    from snakegate.contract.output_files import OutputFile
    from snakegate.contract.outputs import placeholders

    out = {}
    for name, decl in manifest.outputs.items():
        if placeholders(decl.path):
            continue  # a pattern is many files; the verdict says a check cannot read it
        rel = folder + decl.path
        job = runstore.read_output_record(run_dir, rel)
        missing = None
        if rel in parents_copies:
            missing = ("is still the copy of the parent run's output and this run did not succeed (its own job "
                       "may not have run)")
        elif not (run_dir / rel).exists() and not (run_dir / rel).is_symlink():
            missing = "was not written"
        elif job is None or not isinstance(job.get("sha256"), str):
            missing = "has no record of the job that wrote it (the job did not finish)"
        out[prefix + name] = OutputFile(run_dir / rel, decl.type, sha256=(job or {}).get("sha256"), missing=missing)
    return out


def _parents_copies(run_dir: Path, record: dict) -> set[str]:
    """A fork that did not succeed: the outputs still as copied from its parent (paths in the run folder)."""
    seeded = record.get("seeded")
    if record.get("status") == "succeeded" or not seeded:
        return set()
    from snakegate.run import reuse

    return {entry["path"] for entry in reuse.still_reused(run_dir, seeded)}
