"""The gate inside a job: what a cluster (or spawned) job proves when Snakemake re-reads the top-level Snakefile.

The head (snakegate run's Snakemake, or plain `snakemake` on a login node) has
gated the run config in full, hashed every input, made the run folder with
`invocation.json`, the explicit `config.yaml` and the workflow copy, before any
job. Each job then re-reads the Snakefile; this is what it does instead of the
full gate, in a few milliseconds whatever the inputs' size:

- finds its run: `run_id` from the config, else the run the head named in the
  environment (JOB_RUN_ENV, which Slurm and local subprocesses pass on);
- refuses unless the run folder's `invocation.json` and `config.yaml` name the
  same invocation and config.yaml's params are that invocation's (input paths
  by where they resolve, `x-sensitive` values by their keyed hash), the run's
  workflow copy still has the gated content hash (a few small files), the
  config's `invocation_id` (when it has one) and the id `snakegate run` pinned
  (EXPECTED_ENV, when set) are that invocation, and every value the job's own
  config gives (workflow, version, run_id, each param; input paths compared
  after resolving them) is the one the head recorded;
- takes the params from the run folder's explicit `config.yaml`, never from the
  schema's defaults (the registry may have moved on; the copy is what runs), and
  the Snakefile and per-rule resources from the run's workflow copy.

It never builds a DAG, never re-hashes an input (the head did, and re-checks
them before `succeeded`), never writes. Imports are plain Python and PyYAML
(which Snakemake has already loaded): no jsonschema, no pydantic, no gate.
Where the job's run cannot be found without the full gate (a config with no
`run_id` in an environment the head's variable did not reach), it says so and
`prepare()` falls back to the full gate (snakegate.run.prepare).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.run import staged
from snakegate.run.handshake import EXPECTED_ENV, JOB_INVOCATION_ENV, JOB_RUN_ENV, Refused  # noqa: F401 - Refused: the Snakefile's refusal type

COPY_DIR = "workflow"  # snakegate.run.pinning.COPY_DIR: the run's workflow copy
INVOCATION_JSON = "invocation.json"  # runstore.INVOCATION_JSON
CONFIG_YAML = "config.yaml"  # runstore.CONFIG_YAML
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SNAKEFILES = ("Snakefile", "workflow/Snakefile", "snakefile", "workflow/snakefile")


class JobRefused(Refused):
    """The job's config is not the run's gated invocation; the message says which value and why."""


class RunNotFound(Exception):
    """The job cannot tell its run without the full gate (no run_id, no JOB_RUN_ENV)."""


@dataclass
class JobRun:
    """What a job needs from its run: the copy's Snakefile, the explicit params, the output prefix, resources."""

    run_id: str
    run_dir: Path
    invocation_id: str
    workflow_id: str
    snakefile: str
    params: dict
    prefix: str
    rules: dict = field(default_factory=dict)  # the copy's workflow.yaml `rules:` (for resources)
    record_hostname: bool = True
    targets: list = field(default_factory=list)  # a job builds only its own target job, never snakegate_all's
    source: str = "job"
    staged: dict = field(default_factory=dict)  # inputs.json entries (snakegate.run.staged)
    modules: list = field(default_factory=list)  # a plan's steps as modules (snakegate.plan.compose.modules)
    step_rules: dict = field(default_factory=dict)  # a plan: step -> its copy's workflow.yaml `rules:`
    prepared_at: tuple = field(default_factory=lambda: (time.perf_counter(), time.process_time()))
    work: list = field(default_factory=lambda: [0.0, 0.0])  # after prepare: resources, the record (wall, CPU)

    def workflow_default_target(self, workflow) -> list:
        """Nothing inside a job: like `targets`, the workflow's own default target is the head's to build."""
        return []

    def apply_resources(self, workflow) -> None:
        from snakegate.contract import resources

        began = _clocks()
        try:
            for module in self.modules or []:  # a plan: each step's rules, with its own params
                resources.apply(workflow, resources.resolve(self.step_rules.get(module["name"]) or {},
                                                            module["params"]), module["rule_prefix"])
            if not self.modules:
                resources.apply(workflow, resources.resolve(self.rules, self.params), "wf_")
        except resources.ResourceError as exc:
            raise JobRefused(f"workflow {self.workflow_id}'s rules cannot be given their resources: {exc}") from None
        self._add(began)

    def record_job(self, workflow, parse_started: tuple | None = None) -> None:
        """The job's record of itself (snakegate.run.cluster): scheduler job id, node, start, and its end at exit.
        `parse_started` ((perf_counter, process_time) before the Snakefile imported snakegate) makes its
        `gate_seconds` and `gate_cpu_seconds`: snakegate's own time in this job (imports, this gate,
        resources, the record), wall clock and CPU."""
        began = _clocks()
        from snakegate.run import cluster

        if parse_started is not None:
            self.work[0] += self.prepared_at[0] - parse_started[0]
            self.work[1] += self.prepared_at[1] - parse_started[1]
        self._add(began)  # everything but writing the record itself (one small file) is counted
        cluster.job_started(self.run_dir, workflow, tuple(self.work), self.record_hostname)

    def _add(self, began: tuple) -> None:
        now = _clocks()
        self.work[0] += now[0] - began[0]
        self.work[1] += now[1] - began[1]

    def declare_modules(self, workflow) -> None:
        """As the head does (snakegate.run.entry): the run's workflow copy as the module wf_*; a plan's
        steps as their modules (snakegate.plan.compose)."""
        from snakegate.plan.compose import declare

        declare(workflow, self.modules or [{"name": "workflow", "snakefile": self.snakefile, "prefix": self.prefix,
                                            "rule_prefix": "wf_", "params": self.params, "upstream": []}])

    def guard_jobs(self, workflow) -> None:
        """As the head does (snakegate.run.entry): the job's inputs checked before it runs, its outputs hashed."""
        from snakegate.run import guard

        began = _clocks()
        guard.install(workflow, self.run_dir, self.staged, "wf_")
        self._add(began)

    def keep_job_stderr(self) -> None:
        """As the head does (snakegate.run.entry): a spawned job's stderr into runs/<run_id>/stderr/."""
        from snakegate.run import jobstderr

        began = _clocks()
        jobstderr.install(self.run_dir, "wf_")
        jobstderr.redirect_spawned_job(self.run_dir, sys.argv, "wf_")
        self._add(began)

    # Snakemake runs no handler inside a job (its jobs get --no-hooks); these are here for the Snakefile.
    def on_start(self, log=None, **_kw) -> None:
        return None

    def on_success(self, log=None, **_kw) -> None:
        return None

    def on_error(self, log=None, **_kw) -> None:
        return None


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _settings(root: Path):
    from snakegate.registry.settings import load_settings  # tomllib and dataclasses only

    return load_settings(root)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_yaml(path: Path) -> Any:
    import yaml  # Snakemake's own YAML library, loaded before any Snakefile is read

    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError):
        return None


def _same(given: Any, recorded: Any, root: Path) -> bool:
    """Is the job's config value the one the head recorded? Text that names a file counts as the same
    when it resolves (from the registry root, symlinks followed) to the recorded absolute path."""
    if given == recorded and type(given) is type(recorded):
        return True
    if isinstance(given, dict) and isinstance(recorded, dict):
        return given.keys() == recorded.keys() and all(_same(given[k], recorded[k], root) for k in given)
    if isinstance(given, list) and isinstance(recorded, list):
        return len(given) == len(recorded) and all(_same(a, b, root) for a, b in zip(given, recorded))
    if isinstance(given, str) and isinstance(recorded, str) and os.path.isabs(recorded):
        return os.path.realpath(os.path.join(root, os.path.expanduser(given))) == recorded
    return False


def _gated(value: Any, canonical: Any, root: Path, key: list) -> bool:
    """Is `value` (config.yaml: absolute input paths, sensitive values themselves) the gated invocation's
    `canonical` value (registry-relative input paths, `hmac-sha256:` for sensitive values)?"""
    if value == canonical and type(value) is type(canonical):
        return True
    if isinstance(canonical, str) and canonical.startswith("hmac-sha256:"):
        from snakegate.provenance import secrets  # hashlib and hmac: the registry's key, read only here

        if not key:
            try:
                key.append(secrets.existing_key(root))
            except (OSError, secrets.SecretKeyError):
                return False
        return secrets.keyed_hash(key[0], value) == canonical
    if isinstance(value, dict) and isinstance(canonical, dict):
        return value.keys() == canonical.keys() and all(_gated(value[k], canonical[k], root, key) for k in value)
    if isinstance(value, list) and isinstance(canonical, list):
        return len(value) == len(canonical) and all(_gated(a, b, root, key) for a, b in zip(value, canonical))
    if isinstance(value, str) and isinstance(canonical, str) and os.path.isabs(value):
        return os.path.normpath(os.path.join(root, canonical)) == value
    return False


def params_match(params: dict, canonical: dict, registry_root: Path) -> bool:
    """Are config.yaml's `params` (absolute input paths, sensitive values themselves) exactly the canonical
    invocation's (registry-relative paths, keyed hashes)?"""
    return _gated(params, canonical, Path(registry_root), [])


def _refuse(where: str, what: str, why: str) -> JobRefused:
    """A refusal in the gate's one format (snakegate.run.entry.refusal_text), code invocation_mismatch."""
    return JobRefused(
        "snakegate gate refused this job (1 problem(s)); the job was not run:\n"
        f"  - {where} [invocation_mismatch]: {what} {why}\n"
        "      fix: a job runs only the invocation its run was gated for: run the approved config unchanged, "
        "or gate and approve the new one")


def _prove_record(root: Path, run_id: str, run_dir: Path, expected: str, invocation: dict) -> None:
    """The run folder's invocation.json proves itself (its id is the sha256 of the invocation it holds) and
    is the invocation the head pinned: in this job's environment (JOB_INVOCATION_ENV, or EXPECTED_ENV under
    `snakegate run`) and in the registry's run index, outside the run folder. So a config.yaml and an
    invocation.json rewritten together, keeping the id, never pass."""
    from snakegate.provenance import runindex
    from snakegate.provenance.hashing import canonical_json, sha256_text

    actual = sha256_text(canonical_json(invocation))
    if actual != expected:
        raise _refuse("invocation_id", f"run folder {run_dir}", f"has an invocation.json that names invocation "
                      f"{expected[:12]}… but holds one that hashes to {actual[:12]}… (changed after the gate)")
    pins = [("the head of the run", os.environ.get(JOB_INVOCATION_ENV) or os.environ.get(EXPECTED_ENV)),
            ("the registry's run index", runindex.pinned(root, run_id))]
    for where, pin in pins:
        if pin is not None and pin != expected:
            raise _refuse("invocation_id", f"run {run_id}", f"holds invocation {expected[:12]}…, but {where} pinned "
                                                            f"{pin[:12]}…")
    if all(pin is None for _where, pin in pins):
        raise _refuse("invocation_id", f"run {run_id}", "has no pinned invocation: neither the head's environment "
                      f"({JOB_INVOCATION_ENV}) nor the registry's run index ({'/'.join(runindex.INDEX_DIR)}) names it")


def _check_rewritten_sheets(run_dir: Path, entries: dict) -> None:
    """A staged sample sheet is read when the workflow is parsed, in every job: it must still be the copy
    the head wrote (the guard checks the files jobs read as inputs, snakegate.run.guard)."""
    import hashlib

    for key, entry in sorted(entries.items()):
        if "gated_sha256" not in entry:
            continue
        try:
            with open(run_dir / entry["path"], "rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            digest = None
        if digest != entry["sha256"]:
            raise _refuse(key, f"the staged sample sheet {run_dir / entry['path']}",
                          "is not the copy the head staged (changed after the gate)")


def _plan_refs(value, parts=()):
    """(parts, from, output) of every `{from, output}` reference in a step's params."""
    if isinstance(value, dict):
        if set(value) == {"from", "output"}:
            yield parts, value["from"], value["output"]
            return
        for key, sub in value.items():
            yield from _plan_refs(sub, parts + (key,))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _plan_refs(sub, parts + (i,))


def _plan_job(config: dict, root: Path, settings, run_id: str, run_dir: Path, expected: str, invocation: dict,
              explicit: dict, workdir) -> JobRun:
    """The light gate for a job of a plan run: every step's params, copy and staged inputs are the plan's
    gated invocation's, and the job gets every step as a module (as the head declared them)."""
    import types

    from snakegate.plan.compose import modules as plan_modules
    from snakegate.provenance.hashing import workflow_hash

    claimed = config.get("invocation_id")
    if claimed is not None and claimed != expected:
        raise _refuse("invocation_id", "the run config's `invocation_id`",
                      f"is {str(claimed)[:12]}…, but run {run_id} was gated as invocation {expected[:12]}…")
    if config.get("run_id", run_id) != run_id:
        raise _refuse("run_id", "the run config's `run_id`", f"is {config.get('run_id')!r}, not {run_id!r}")
    steps = invocation.get("steps") if isinstance(invocation.get("steps"), dict) else {}
    recorded_steps = explicit.get("steps") if isinstance(explicit.get("steps"), dict) else {}
    given_steps = config.get("steps") if isinstance(config.get("steps"), dict) else {}
    if set(recorded_steps) != set(steps) or set(given_steps) - set(steps):
        raise _refuse("steps", f"run folder {run_dir}", f"has a config.yaml whose steps are not those of invocation "
                                                        f"{expected[:12]}… (changed after the gate)")
    key: list = []
    workflows, params, refs, rules, gated = {}, {}, {}, {}, {}
    for name in sorted(steps):
        inv = steps[name]
        step_params = (recorded_steps[name] or {}).get("params") or {}
        if not isinstance(step_params, dict) or not _gated(step_params, inv.get("params"), root, key):
            raise _refuse(f"steps.{name}.params", f"run folder {run_dir}", f"has a config.yaml whose step `{name}` "
                          f"params are not those of invocation {expected[:12]}… (changed after the gate)")
        given = ((given_steps.get(name) or {}).get("params")) or {}
        for param in sorted(given, key=str):
            if param not in step_params or not _same(given[param], step_params[param], root):
                raise _refuse(f"steps.{name}.params.{param}", f"param `{param}` of step `{name}`",
                              f"differs from the value run {run_id} was gated with")
        copy = run_dir / "steps" / name / COPY_DIR
        snakefile = next((copy / s for s in _SNAKEFILES if (copy / s).is_file()), None)
        manifest = _read_yaml(copy / "workflow.yaml")
        if snakefile is None or not isinstance(manifest, dict):
            raise _refuse("workflow", f"run folder {run_dir}", f"has no workflow copy in {copy}")
        if workflow_hash(copy) != inv.get("workflow_hash"):
            raise _refuse("workflow", f"the workflow copy {copy}", f"no longer has the content hash step `{name}` "
                                                                  "was gated with (changed after the gate)")
        schema = _read_json(copy / "schema.json")
        workflows[name] = types.SimpleNamespace(snakefile=str(snakefile), schema=schema,
                                                manifest=types.SimpleNamespace(outputs=manifest.get("outputs") or {}))
        refs[name] = [types.SimpleNamespace(parts=parts, source=src, output=out)
                      for parts, src, out in _plan_refs(step_params)]
        rules[name] = manifest.get("rules") if isinstance(manifest.get("rules"), dict) else {}
        params[name] = step_params
        gated.update({f"steps.{name}.{k}": v for k, v in (inv.get("inputs") or {}).items()})
    entries = staged.read_manifest(run_dir)
    problem = staged.manifest_problem(entries, gated)
    if problem:
        raise _refuse("inputs", f"run folder {run_dir}", f"{problem} (changed after the gate)")
    _check_rewritten_sheets(run_dir, entries or {})
    prefix_of = {n: f"steps.{n}." for n in steps}
    staged_params = {n: staged.staged_params(params[n], {k[len(prefix_of[n]):]: e for k, e in (entries or {}).items()
                                                          if k.startswith(prefix_of[n])}, run_dir) for n in steps}
    workdir = Path(workdir or os.getcwd())
    rel = os.path.relpath(run_dir, workdir)
    prefix = run_dir.as_posix() if rel.startswith("..") else Path(rel).as_posix()
    order = sorted(steps)
    return JobRun(run_id=run_id, run_dir=run_dir, invocation_id=expected, workflow_id="plan", snakefile="",
                  params={}, prefix=prefix, record_hostname=getattr(settings, "record_hostname", True),
                  staged=entries or {}, modules=plan_modules(order, workflows, staged_params, refs, prefix),
                  step_rules=rules)


def find_run(config: dict, runs_dir: Path) -> tuple[str, Path]:
    """The job's run id and folder: the config's run_id, else the head's JOB_RUN_ENV."""
    run_id = config.get("run_id")
    if run_id is None:
        run_id = os.environ.get(JOB_RUN_ENV)
        if not run_id:
            raise RunNotFound("the run config has no run_id and the head's run is not in the environment "
                              f"({JOB_RUN_ENV})")
    elif os.environ.get(JOB_RUN_ENV) not in (None, run_id):
        raise _refuse("run_id", "the run config", f"names run {run_id!r}, but its head started run "
                                        f"{os.environ[JOB_RUN_ENV]!r}")
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id) or set(run_id) == {"."}:
        raise _refuse("run_id", "`run_id`", f"is {run_id!r}, which names no run folder")
    return run_id, runs_dir / run_id


def prepare(config: dict, registry_root: str | os.PathLike, configfiles=(), exec_mode=None) -> JobRun:
    """What the top-level Snakefile calls inside a job (the same arguments as snakegate.run.entry.prepare):
    the light gate; only when the job's run cannot be told without it, the full one (then checked the same)."""
    try:
        try:
            return light_gate(config, registry_root)
        except RunNotFound:
            from snakegate.run.prepare import prepare as full  # the full gate: finds plain-<id> from the config

            ctx = full(config, registry_root, configfiles, exec_mode)
            os.environ[JOB_RUN_ENV] = ctx.run_id
            return light_gate(config, registry_root)
    except Refused as refusal:
        _keep_refusal(config, registry_root, refusal)
        raise


def _keep_refusal(config: dict, registry_root, refusal: Exception) -> None:
    """Write the refusal into the job's own stderr file in the run folder too, where the head reads why a
    job failed (run.json `failure`): the job's terminal is a cluster log nobody may ever see."""
    try:
        from snakegate.run import jobstderr

        _run_id, run_dir = find_run(dict(config or {}), _settings(Path(os.path.realpath(registry_root))).runs_dir)
        path = jobstderr.target_job_file(run_dir, sys.argv, "wf_")
        if path is None or not run_dir.is_dir():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{refusal}\n")
    except Exception:  # noqa: BLE001 - the refusal itself must still reach Snakemake
        return


def light_gate(config: dict, registry_root: str | os.PathLike, workdir: str | os.PathLike | None = None) -> JobRun:
    """The light gate (see the module docstring). Raises JobRefused, or RunNotFound when only the full
    gate can tell the run."""
    root = Path(os.path.realpath(registry_root))
    config = dict(config or {})
    settings = _settings(root)
    run_id, run_dir = find_run(config, settings.runs_dir)
    recorded = _read_json(run_dir / INVOCATION_JSON)
    expected = recorded.get("invocation_id")
    invocation = recorded.get("invocation") if isinstance(recorded.get("invocation"), dict) else {}
    if not isinstance(expected, str):
        raise _refuse("run_id", f"run folder {run_dir}", "has no invocation.json: a job runs only inside a run whose head "
                                               "(snakegate run or snakemake) gated it")
    explicit = _read_yaml(run_dir / CONFIG_YAML)
    if not isinstance(explicit, dict) or explicit.get("invocation_id") != expected:
        raise _refuse("invocation_id", f"run folder {run_dir}", f"has a config.yaml that is not invocation {expected[:12]}… "
                                               "(changed or removed after the gate)")
    _prove_record(root, run_id, run_dir, expected, invocation)
    if recorded.get("kind") == "plan":
        return _plan_job(config, root, settings, run_id, run_dir, expected, invocation, explicit, workdir)
    claimed = config.get("invocation_id")
    if claimed is not None and claimed != expected:
        raise _refuse("invocation_id", "the run config's `invocation_id`",
                      f"is {str(claimed)[:12]}…, but run {run_id} was gated as invocation {expected[:12]}…")
    for key, want in (("workflow", invocation.get("workflow")), ("version", invocation.get("version")),
                      ("run_id", run_id)):
        if key in config and config[key] != want:
            raise _refuse(key, f"the run config's `{key}`", f"is {config[key]!r}, but run {run_id} was gated with {want!r}")
    given = config.get("params") or {}
    params = explicit.get("params") or {}
    if not isinstance(params, dict) or not _gated(params, invocation.get("params"), root, []):
        raise _refuse("params", f"run folder {run_dir}", f"has a config.yaml whose params are not those of "
                                                         f"invocation {expected[:12]}… (changed after the gate)")
    if not isinstance(given, dict):
        raise _refuse("params", "the run config's `params`", "is not a mapping")
    for name in sorted(given, key=str):
        if name not in params:
            raise _refuse(f"params.{name}", f"param `{name}`", f"was not part of invocation {expected[:12]}…")
        if not _same(given[name], params[name], root):
            raise _refuse(f"params.{name}", f"param `{name}`", f"differs from the value run {run_id} was gated with")

    copy = run_dir / COPY_DIR
    snakefile = next((copy / s for s in _SNAKEFILES if (copy / s).is_file()), None)
    manifest = _read_yaml(copy / "workflow.yaml")
    if snakefile is None or not isinstance(manifest, dict):
        raise _refuse("workflow", f"run folder {run_dir}", f"has no workflow copy in {copy}")
    from snakegate.provenance.hashing import workflow_hash  # a few small files: the workflow, not the data

    if workflow_hash(copy) != invocation.get("workflow_hash"):
        raise _refuse("workflow", f"the workflow copy {copy}", f"no longer has the content hash invocation "
                                                              f"{expected[:12]}… was gated with (changed after the gate)")
    entries = staged.read_manifest(run_dir)
    problem = staged.manifest_problem(entries, invocation.get("inputs") or {})
    if problem:
        raise _refuse("inputs", f"run folder {run_dir}", f"{problem} (changed after the gate)")
    _check_rewritten_sheets(run_dir, entries or {})
    workdir = Path(workdir or os.getcwd())
    rel = os.path.relpath(run_dir, workdir)
    prefix = run_dir.as_posix() if rel.startswith("..") else Path(rel).as_posix()
    return JobRun(run_id=run_id, run_dir=run_dir, invocation_id=expected, workflow_id=str(invocation.get("workflow")),
                  snakefile=str(snakefile), params=staged.staged_params(params, entries, run_dir), prefix=prefix,
                  staged=entries or {},
                  rules=manifest.get("rules") if isinstance(manifest.get("rules"), dict) else {},
                  record_hostname=getattr(settings, "record_hostname", True))
