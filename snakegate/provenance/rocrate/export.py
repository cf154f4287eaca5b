"""Export one run as a Workflow Run RO-Crate following the Provenance Run Crate profile (0.5).

The crate mirrors the registry layout (workflows/<id>/..., data/..., runs/<run_id>/...),
so the paths in the run's PROV record name the crate's files directly. It holds:

- a README.md about the crate; the license and the person who ran it as author;
- the workflow folder; its Snakefile is the main entity (File, SoftwareSourceCode,
  ComputationalWorkflow, HowTo; Bioschemas ComputationalWorkflow 1.0) in language
  Snakemake, with one tool (SoftwareApplication, identified by the same IRI as the PROV
  record's plan step) and one HowToStep per rule, FormalParameters for every rule's
  inputs and outputs, every parameter of the contract and every declared output;
- the run: a CreateAction (instrument the workflow; object the input files and a
  PropertyValue per parameter, `x-sensitive` values as their keyed hash; result the
  outputs), one CreateAction per job (instrument the rule's tool), a ControlAction per
  job (instrument the step) and an OrganizeAction for Snakemake itself, every action
  mentioned from the root and carrying the person as agent; a fork also carries the
  parent run's jobs whose outputs it copied instead of running them again; the workflow's
  parts (hasPart) are the tools a job action ran (a tool must be an action's instrument),
  its HowToSteps every rule;
- every file with its encodingFormat, size and sha256; the run folder's records
  (config.yaml, invocation.json, run.json, prov.*) and logs;
- the run's verdict, for a reader who never opens prov.json (verdict.py): each check a
  DQV QualityMeasurement (and a schema.org PropertyValue) of its Metric, computed on its
  output file, named by the run's CreateAction, and a Verdict section in the README.

Jobs, their files and times come from prov.json (from_prov.py), so the crate is built
from the run's records alone; the core passes the manifest and schema in as dicts.
`validate()` runs roc-validator as a separate command, offline (validate.py). A plan's run
is exported by plan_crate.py on the same parts (`write_crate`, the actions, the records). The crate's
workflow part and its context part are mixins in workflow_part.py and context_part.py; the fixed
terms and path helpers are in terms.py.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from snakegate.provenance import runstore
from snakegate.provenance.compare import load_prov, plain
from snakegate.provenance.document import RENDERINGS, ensure_rendering, local
from snakegate.provenance.hashing import sha256_file
from snakegate.provenance.rocrate import from_prov as rp
from snakegate.provenance.rocrate import verdict
from snakegate.provenance.rocrate.context_part import ContextPart
from snakegate.provenance.rocrate.terms import (  # noqa: F401 (DEFAULT_LICENSE, value_type: re-exported)
    DEFAULT_LICENSE,
    FAILED,
    SNAKEMAKE_IRI,
    STATUS,
    encoding_format,
    rel_path,
    resolve,
    slug,
    value_type,
)
from snakegate.provenance.rocrate.workflow_part import WorkflowPart
from snakegate.provenance.runrecords import run_secrets, scrub

RECORDS = (runstore.CONFIG_YAML, runstore.INVOCATION_JSON, runstore.RUN_JSON, runstore.SNAKEMAKE_LOG,
           runstore.ORIGIN_JSON, "prov.json", "prov.provn", "prov.ttl")


class ExportError(Exception):
    """The crate cannot be written as asked; the message names the path or the record."""


class _Crate(WorkflowPart, ContextPart):
    """One run's crate being built; its workflow and context parts are the mixins in workflow_part.py and
    context_part.py."""

    def __init__(self, run_dir: Path, registry_root: Path, manifest: dict, schema: dict, workflow_folder: Path,
                 scratch: Path, license: str):
        from rocrate.rocrate import ROCrate

        self.run_dir, self.root, self.wf_folder = Path(run_dir), Path(registry_root), Path(workflow_folder)
        self.manifest, self.schema, self.scratch = manifest, schema or {}, Path(scratch)
        self.prov = load_prov(self.run_dir)
        for name in RENDERINGS:  # the crate carries all three PROV files: made here when the run deferred them
            ensure_rendering(self.run_dir, name)
        self.record = runstore.read_run(self.run_dir)
        self.run_id = self.record.get("run_id") or self.run_dir.name
        self.wf_id = manifest.get("id") or self.wf_folder.name
        self.run_rel, self.wf_rel = rel_path(self.run_dir, self.root), rel_path(self.wf_folder, self.root)
        self.key, self.secrets = run_secrets(self.run_dir, self.root, self.schema)
        self.run_attrs = rp.run_activity(self.prov, self.run_id)
        self.status = self.record.get("status") or plain(self.run_attrs.get("sg:status")) or "unknown"
        # the Workflow Run Crate profiles (0.5) are defined on RO-Crate 1.1 and its context's term IRIs
        self.crate = ROCrate(version="1.1")
        self.files: dict[str, object] = {}
        self.examples: dict[str, list] = {}  # entity id -> FormalParameters it is an example of
        self.rule_fps: dict[tuple[str, str, str], object] = {}
        self.tools: dict[str, object] = {}
        self.steps: dict[str, object] = {}
        self.owners: dict[str, str] = {}  # rule -> the workflow it belongs to
        self.instruments: set[str] = set()  # rules a job action ran
        self.actions: list = []
        self.extra_controls: list = []  # the ControlActions of rules no job of which started (not_started)
        self.mentioned: list = []  # further actions mentioned from the root (a chat's approval)
        self.job_tools = rp.job_tools(self.prov)  # job activity -> the external tools its command ran
        self.external = {t["id"]: t for t in rp.tools(self.prov)}
        self.person = None

    def add(self, ident: str, props: dict):
        from rocrate.model.contextentity import ContextEntity

        return self.crate.add(ContextEntity(self.crate, ident, properties=props))

    def file(self, source: Path, dest: str, props: dict | None = None):
        """The crate's File entity at `dest` (copied from `source` when written), made once."""
        if dest in self.files:
            return self.files[dest]
        properties = {"name": Path(dest).name, "encodingFormat": encoding_format(dest), **(props or {})}
        if source.is_file():
            properties.setdefault("contentSize", str(source.stat().st_size))
            properties.setdefault("sha256", sha256_file(source))
        entity = self.crate.add_file(source, dest_path=dest, properties=properties)
        self.files[dest] = entity
        return entity

    def example_of(self, entity, fp) -> None:
        if fp is not None and fp not in self.examples.setdefault(entity.id, []):
            self.examples[entity.id].append(fp)

    # actions ---------------------------------------------------------------------------------------
    def action(self, instrument, ident: str, name: str, description: str, status: str | None, start, end,
               error: str | None, objects: list, results: list):
        props = {"@type": "CreateAction", "name": name, "description": description,
                 "actionStatus": STATUS.get(status or "", FAILED)}
        if start:
            props["startTime"] = start
        if end:
            props["endTime"] = end
        if error and props["actionStatus"] == FAILED:
            props["error"] = error
        action = self.crate.add_action(instrument, identifier=ident, properties=props)
        if objects:
            action["object"] = objects
        if results:
            action["result"] = results
        if self.person is not None:
            action["agent"] = self.person
        self.actions.append(action)
        return action

    def job_action(self, job: rp.CrateJob, run_end: str | None, parent: str | None = None):
        inputs, outputs = [], []
        for paths, into, direction in ((job.used, inputs, "input"), (job.generated, outputs, "output")):
            for path, role in paths:
                source = resolve(self.root, path)
                if not source.is_file():
                    continue
                entity = self.file(source, rel_path(source, self.root))
                into.append(entity)
                name = role.rsplit("/", 1)[-1] if role and role.startswith(f"plan:rule/{local(job.rule)}/") else None
                self.example_of(entity, self.rule_fps.get((job.rule, direction, name)))
        tool = self.tool(job.rule)
        self.instruments.add(job.rule)
        ran = [self.external_tool(t) for t in (self.job_tools.get(job.ident, []) if parent is None else [])]
        for app in ran:  # the rule's tool requires the external tools its jobs ran
            required = tool.get("softwareRequirements") or []
            required = required if isinstance(required, list) else [required]
            if app.id not in {r.id for r in required}:
                tool["softwareRequirements"] = [*required, app]
        where = f" in run {parent}, whose outputs this fork copied instead of running it again" if parent else ""
        wildcards = f" with wildcards {job.wildcards}" if job.wildcards else ""
        names = ", ".join(f"{a.get('name')} {a.get('softwareVersion')}" for a in ran)
        wildcards += f", running {names}" if ran else ""
        # a job a cancel killed has no end of its own: it ended when the run did
        end = rp.crate_time(job.end) or (rp.crate_time(run_end) if job.status in ("cancelled", "failed") else None)
        ident = f"#job-{slug(parent) + '-' if parent else ''}{slug(job.suffix)}"
        action = self.action(tool, ident, f"job {job.suffix}" + (f" (run {parent})" if parent else ""),
                             f"Snakemake job of rule {job.rule}{wildcards}{where}: {job.status or 'unknown'}",
                             job.status, rp.crate_time(job.start), end, job.error, inputs, outputs)
        return self.control(job.rule, action, f"Snakemake scheduling the job of rule {job.rule}")

    def run(self, license: str):
        self.describe_root(license)
        self.workflow()
        objects, results = self.parameters()
        jobs = rp.jobs(self.prov)
        run_action = self.run_action(objects, self.partial_results(jobs, results),
                                     f"snakegate run {self.run_id} of workflow {self.wf_id} "
                                     f"{self.manifest.get('version', '')}: {self.status}")
        controls = [self.job_action(job, self.run_attrs.get("prov:endTime")) for job in jobs]
        parent = self.record.get("parent_run")
        if parent:  # a fork: the parent's jobs of the rules it did not run again
            ran = {job.rule for job in jobs}
            try:
                parent_prov = load_prov(self.run_dir.parent / parent)
            except Exception:  # noqa: BLE001 - a parent without a readable record: the fork stands alone
                parent_prov = {}
            controls += [self.job_action(job, None, parent) for job in rp.jobs(parent_prov) if job.rule not in ran]
        self.main["hasPart"] = self.ran(self.tools)
        self.main["step"] = list(self.steps.values())
        return self.finish(run_action, controls)

    def run_action(self, objects: list, results: list, description: str):
        """The run's CreateAction: the main workflow as instrument, the run's times, status and error."""
        start = rp.crate_time(self.run_attrs.get("prov:startTime"))
        end = rp.crate_time(self.run_attrs.get("prov:endTime"))
        error = rp.error_of(self.run_attrs) or (f"cancelled by {self.record['cancelled_by']}"
                                                           if self.record.get("cancelled_by") else None)
        return self.action(self.main, f"#run-{slug(self.run_id)}", f"run {self.run_id} of {self.wf_id}", description,
                           self.status, start, end, error, objects, results)

    def finish(self, run_action, controls: list):
        """Snakemake's OrganizeAction over the ControlActions, every action mentioned from the root, the records,
        the README; the crate."""
        controls = [*controls, *self.extra_controls]
        self.records(run_action)
        engine = self.add(SNAKEMAKE_IRI, {"@type": "SoftwareApplication", "name": "Snakemake", "url": SNAKEMAKE_IRI,
                                          "softwareVersion": rp.engine_version(self.prov) or "unknown"})
        organize = self.add(f"#orchestrate-{slug(self.run_id)}", {
            "@type": "OrganizeAction", "name": f"Snakemake orchestrating run {self.run_id}",
            "description": f"Snakemake executing the jobs of run {self.run_id}"})
        organize["instrument"] = [engine, *self.context(engine, run_action)]
        organize["result"] = run_action
        if controls:
            organize["object"] = controls
        for key in ("startTime", "endTime"):
            if run_action.get(key):
                organize[key] = run_action[key]
        if self.person is not None:
            organize["agent"] = self.person
        self.crate.root_dataset["mentions"] = [*self.actions, organize, *controls, *self.mentioned]
        self.readme(verdict.add(self, run_action))
        for ident, fps in self.examples.items():
            self.crate.get(ident)["exampleOfWork"] = fps
        _single_values(self.crate)
        return self.crate

    def records(self, run_action) -> None:
        """The run folder's records (x-sensitive values scrubbed from the copies) and logs."""
        for name in RECORDS:
            source = self.run_dir / name
            if not source.is_file():
                continue
            if self.secrets and not name.startswith("prov."):
                text = source.read_text(encoding="utf-8", errors="replace")
                source = self.scratch / name
                source.write_text(scrub(text, self.secrets, self.key), encoding="utf-8")
            entity = self.file(source, f"{self.run_rel}/{name}")
            if name.startswith("prov."):
                entity["about"] = run_action
        logs = self.run_dir / "logs"
        if logs.is_dir():
            for path in sorted(p for p in logs.rglob("*") if p.is_file()):
                self.file(path, f"{self.run_rel}/{path.relative_to(self.run_dir).as_posix()}")

    def readme(self, verdict_lines: list[str] = ()) -> None:
        """README.md about the crate (its lines: readme_lines, then the verdict's)."""
        text = "\n".join([*self.readme_lines(),
                          "- Inputs sit at their paths relative to the registry (e.g. `data/...`).",
                          "",
                          "Sensitive parameter values appear only as keyed hashes (`hmac-sha256:...`).",
                          *verdict_lines,
                          ""])
        path = self.scratch / "README.md"
        path.write_text(text, encoding="utf-8")
        readme = self.file(path, "README.md", {"about": self.crate.root_dataset, "encodingFormat": "text/markdown"})
        readme["about"] = self.crate.root_dataset

    def readme_lines(self) -> list[str]:
        manifest = self.manifest
        return [
            f"# {manifest.get('title') or self.wf_id}: run {self.run_id}",
            "",
            f"The record of one run of the snakegate workflow `{self.wf_id}` {manifest.get('version', '')}: "
            f"{self.status}, from {rp.crate_time(self.run_attrs.get('prov:startTime')) or '?'} "
            f"to {rp.crate_time(self.run_attrs.get('prov:endTime')) or '?'}.",
            "",
            "- `ro-crate-metadata.json` describes it as a Workflow Run RO-Crate (Provenance Run Crate 0.5): the",
            "  workflow and its steps, the run, each job with the files it used and made, and their sha256.",
            f"- `{self.wf_rel}/` is the workflow as it ran; its `Snakefile` is the main workflow.",
            f"- `{self.run_rel}/` is the run folder: outputs, logs, `config.yaml`, `invocation.json`, `run.json`",
            "  and the run's W3C PROV record (`prov.json`, `prov.provn`, `prov.ttl`).",
        ]


def _single_values(crate) -> None:
    """A property holding one value is that value, not a one-element list (RO-Crate 1.1 JSON-LD)."""
    for entity in crate.get_entities():
        for key, value in list(entity._jsonld.items()):
            if key != "@type" and isinstance(value, list) and len(value) == 1:
                entity._jsonld[key] = value[0]


def build_crate(run_dir: Path, registry_root: Path, manifest: dict, schema: dict, workflow_folder: Path,
                scratch: Path, license: str = DEFAULT_LICENSE):
    """The rocrate.ROCrate of a run (files are copied when it is written; `scratch` holds redacted
    copies of the run's records and the README and must exist until then)."""
    return _Crate(run_dir, registry_root, manifest, schema, workflow_folder, scratch, license).run(license)


def export(run_dir: Path, registry_root: Path, dest: Path, manifest: dict, schema: dict, workflow_folder: Path,
           license: str = DEFAULT_LICENSE) -> Path:
    """Write the crate to folder `dest` or, when it ends in .zip, to that ZIP file. Returns `dest`."""
    return write_crate(lambda scratch: build_crate(run_dir, registry_root, manifest, schema, workflow_folder, scratch,
                                                   license), dest)


def write_crate(build, dest: Path) -> Path:
    """Write the crate `build(scratch)` makes to folder `dest` or, when it ends in .zip, to that ZIP file.
    `scratch` (next to the destination) holds what the crate writes that the run folder does not have (redacted
    records, the README), until the crate is written."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir() and dest.suffix.lower() != ".zip":
        raise ExportError(f"{dest} exists and is not a folder; give a new folder or a .zip path")
    if dest.suffix.lower() != ".zip" and dest.is_dir() and any(dest.iterdir()):
        raise ExportError(f"{dest} is not empty; give a new or empty folder (or a .zip path)")
    if dest.suffix.lower() == ".zip" and dest.is_dir():
        raise ExportError(f"{dest} is a folder; a .zip destination must be a file path")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # scratch sits next to the destination: redacted records, and a zip renamed into place when complete
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".snakegate-export-") as tmp:
        crate = build(Path(tmp))
        if dest.suffix.lower() == ".zip":
            tmp_zip = Path(tmp) / dest.name
            crate.write_zip(tmp_zip)
            os.replace(tmp_zip, dest)
        else:
            crate.write(dest)
    return dest


def validate(crate_path: Path, profile: str = "provenance-run-crate-0.5", severity: str = "required") -> list[str]:
    """Problems roc-validator finds at `severity` and above (an empty list means the crate passes).

    roc-validator runs as its own command, offline (validate.py); ValidatorMissing when there is none."""
    from snakegate.provenance.rocrate import validate as rocval

    return [str(issue) for issue in rocval.validate(Path(crate_path), profile, severity)]
