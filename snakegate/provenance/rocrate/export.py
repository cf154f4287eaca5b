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
is exported by plan_crate.py on the same parts (`write_crate`, the actions, the records).
"""

from __future__ import annotations

import functools
import json
import mimetypes
import os
import tempfile
from pathlib import Path

from snakegate.provenance.rocrate import from_prov as rp
from snakegate.provenance.rocrate import verdict
from snakegate.provenance import runstore
from snakegate.provenance import secrets as secretkeys
from snakegate.provenance.runrecords import run_secrets, scrub
from snakegate.provenance.compare import load_prov, plain
from snakegate.provenance.document import RENDERINGS, ensure_rendering, local
from snakegate.provenance.hashing import IGNORED_NAMES, sha256_file

PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/ro/wfrun/provenance/0.5": "Provenance Run Crate",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": "Workflow RO-Crate",
}
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
SNAKEMAKE_IRI = "https://snakemake.readthedocs.io/"
DEFAULT_LICENSE = "https://spdx.org/licenses/MIT"
COMPLETED, FAILED = "http://schema.org/CompletedActionStatus", "http://schema.org/FailedActionStatus"
_STATUS = {"succeeded": COMPLETED, "failed": FAILED, "cancelled": FAILED, "incomplete": FAILED,
           "interrupted": FAILED}
_TYPES = {"string": "Text", "integer": "Integer", "number": "Float", "boolean": "Boolean"}
_FORMATS = {".json": "application/json", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
            ".png": "image/png", ".yaml": "application/yaml", ".yml": "application/yaml", ".txt": "text/plain",
            ".log": "text/plain", ".ttl": "text/turtle", ".provn": "text/provenance-notation",
            ".py": "text/x-python", ".md": "text/markdown", ".smk": "text/x-snakemake",
            ".vcf": "text/plain", ".gz": "application/gzip", ".bam": "application/octet-stream"}
RECORDS = (runstore.CONFIG_YAML, runstore.INVOCATION_JSON, runstore.RUN_JSON, runstore.SNAKEMAKE_LOG,
           runstore.ORIGIN_JSON, "prov.json", "prov.provn", "prov.ttl")


@functools.cache
def workflow_with_steps():
    """rocrate's ComputationalWorkflow that is also a HowTo: a workflow that links to its steps must be one
    (Provenance Run Crate). Made on first use: rocrate is imported only when a crate is built."""
    from rocrate.model.computationalworkflow import ComputationalWorkflow

    class WorkflowWithSteps(ComputationalWorkflow):
        TYPES = ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"]
    return WorkflowWithSteps


class ExportError(Exception):
    """The crate cannot be written as asked; the message names the path or the record."""


def encoding_format(path: str) -> str:
    """A MIME type for a file name: ours, else the platform's, else Snakefiles as text, else octet-stream."""
    name = os.path.basename(path)
    if name == "Snakefile":
        return "text/x-snakemake"
    return _FORMATS.get(os.path.splitext(name)[1].lower()) or mimetypes.guess_type(name)[0] \
        or "application/octet-stream"


class _Crate:
    def __init__(self, run_dir: Path, registry_root: Path, manifest: dict, schema: dict, workflow_folder: Path,
                 scratch: Path, license: str):
        from rocrate.rocrate import ROCrate

        self.run_dir, self.root, self.wf_folder = Path(run_dir), Path(registry_root), Path(workflow_folder)
        self.manifest, self.schema, self.scratch = manifest, schema or {}, Path(scratch)
        self.prov = load_prov(self.run_dir)
        for name in RENDERINGS:  # the crate carries all three PROV files; a big run deferred two of them
            ensure_rendering(self.run_dir, name)
        self.record = runstore.read_run(self.run_dir)
        self.run_id = self.record.get("run_id") or self.run_dir.name
        self.wf_id = manifest.get("id") or self.wf_folder.name
        self.run_rel, self.wf_rel = _rel(self.run_dir, self.root), _rel(self.wf_folder, self.root)
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

    # the crate, its workflow and its parameters ----------------------------------------------------
    def describe_root(self, license: str) -> None:
        crate, manifest = self.crate, self.manifest
        crate.name = f"{self.wf_id} run {self.run_id}"
        crate.description = (f"Workflow Run RO-Crate (Provenance Run Crate) of snakegate run {self.run_id} of "
                             f"workflow {self.wf_id} {manifest.get('version', '')}: "
                             f"{manifest.get('description', '')}").strip()
        crate.root_dataset["license"] = self.add(license, {"@type": "CreativeWork",
                                                           "name": license.rstrip("/").rsplit("/", 1)[-1]})
        crate.root_dataset["conformsTo"] = [self.add(uri, {"@type": "CreativeWork", "name": name,
                                                           "version": uri.rsplit("/", 1)[-1]})
                                            for uri, name in PROFILES.items()]
        who = rp.person(self.prov)
        if who and who.get("name"):
            self.person = self.add(f"#person-{_slug(who.get('email') or who['name'])}", {
                "@type": "Person", "name": who["name"], **({"email": who["email"]} if who.get("email") else {})})
            crate.root_dataset["author"] = self.person

    def workflow(self):
        manifest = self.manifest
        dest = f"{self.wf_rel}/Snakefile"
        snakefile = self.wf_folder / "Snakefile"
        properties = {"name": manifest.get("title") or self.wf_id, "version": manifest.get("version"),
                      "description": manifest.get("description"), "identifier": self.wf_id,
                      "encodingFormat": "text/x-snakemake", "sha256": sha256_file(snakefile),
                      "url": (rp.plan_base(self.prov) or "").rstrip("/"), "conformsTo": {"@id": BIOSCHEMAS_WORKFLOW}}
        self.main = self.crate.add_workflow(snakefile, dest_path=dest, main=True, lang="snakemake",
                                            cls=workflow_with_steps(), lang_version=rp.engine_version(self.prov),
                                            properties={k: v for k, v in properties.items() if v})
        self.files[dest] = self.main
        for path in _folder_files(self.wf_folder):
            rel = path.relative_to(self.wf_folder).as_posix()
            if rel != "Snakefile" and not rel.startswith(("test/", "examples/")):
                self.file(path, f"{self.wf_rel}/{rel}")
        for rule, io in (manifest.get("rules") or {}).items():
            self.tool(rule, io or {})

    def tool(self, rule: str, io: dict | None = None, ident: str | None = None, own: str | None = None,
             owner: str | None = None, version: str | None = None):
        """The rule's tool (SoftwareApplication) and step (HowToStep), with FormalParameters for its IO. `rule` is
        the name the record gives its jobs; a plan's step passes its rule's own name, workflow and version."""
        if rule in self.tools:
            return self.tools[rule]
        base = rp.plan_base(self.prov)
        ident = ident or (f"{base}rule/{local(rule)}" if base else f"#tool-{_slug(rule)}")
        own, owner = own or rule, owner or self.wf_id
        tool = self.add(ident, {"@type": "SoftwareApplication", "name": f"rule {own}", "url": ident,
                                "softwareVersion": version or self.manifest.get("version") or "unknown",
                                "description": f"Snakemake rule `{own}` of workflow {owner}"})
        for direction in ("input", "output"):
            fps = []
            for name, kind in ((io or {}).get(direction) or {}).items():
                fp = self.crate.add_formal_parameter(name=name, additionalType="File",
                                                     identifier=f"#param-{_slug(rule)}-{direction}-{_slug(name)}",
                                                     description=f"{direction} `{name}` of rule {own} ({kind})")
                self.rule_fps[(rule, direction, name)] = fp
                fps.append(fp)
            if fps:
                tool[direction] = fps
        position = sum(1 for r in self.steps if self.owners.get(r) == owner)
        step = self.add(f"#step-{_slug(rule)}", {"@type": "HowToStep", "name": own, "position": str(position)})
        step["workExample"] = tool
        self.tools[rule], self.steps[rule], self.owners[rule] = tool, step, owner
        return tool

    def ran(self, rules) -> list:
        """The tools of `rules` that a job action names as instrument (a tool in a workflow's hasPart must be
        one: a rule that never ran in the run, nor in its parent's copied jobs, is a step of the workflow but
        not one of its parts here); all of them when none ran."""
        rules = list(rules)
        done = [self.tools[r] for r in rules if r in self.instruments]
        return done or [self.tools[r] for r in rules]

    def parameters(self) -> tuple[list, list]:
        """(objects, results) of the run action: input files and PropertyValues, declared outputs."""
        properties = self.schema.get("properties") or {}
        invocation = (runstore.read_json(self.run_dir / runstore.INVOCATION_JSON).get("invocation") or {})
        params = invocation.get("params") or {}
        if self.key is not None:
            params = secretkeys.redact(self.schema, params, self.key)[0]
        param_fps, output_fps = {}, {}
        for name, sub in properties.items():
            kind = "File" if sub.get("x-artifact") else _TYPES.get(sub.get("type"), "Text")
            param_fps[name] = self.crate.add_formal_parameter(
                name=name, additionalType=kind, identifier=f"#param-{_slug(name)}", description=sub.get("description"),
                valueRequired=name in (self.schema.get("required") or []))
        for name, out in (self.manifest.get("outputs") or {}).items():
            output_fps[name] = self.crate.add_formal_parameter(name=name, additionalType="File",
                                                               identifier=f"#output-{_slug(name)}",
                                                               description=out.get("description"))
        self.main["input"] = list(param_fps.values())
        self.main["output"] = list(output_fps.values())
        objects, results = [], []
        for name, value in params.items():
            if (properties.get(name) or {}).get("x-artifact") and isinstance(value, str) \
                    and (self.root / value).is_file():
                entity = self.file(self.root / value, _rel(self.root / value, self.root))
            else:
                entity = self.add(f"#pv-{_slug(name)}", {
                    "@type": "PropertyValue", "name": name,
                    "value": value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)})
            self.example_of(entity, param_fps.get(name))
            objects.append(entity)
        for name, out in (self.manifest.get("outputs") or {}).items():
            source = self.run_dir / out["path"]
            if source.is_file():
                entity = self.file(source, f"{self.run_rel}/{out['path']}", {"description": out.get("description")})
                self.example_of(entity, output_fps[name])
                results.append(entity)
        return objects, results

    # actions ---------------------------------------------------------------------------------------
    def action(self, instrument, ident: str, name: str, description: str, status: str | None, start, end,
               error: str | None, objects: list, results: list):
        props = {"@type": "CreateAction", "name": name, "description": description,
                 "actionStatus": _STATUS.get(status or "", FAILED)}
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
                source = _resolve(self.root, path)
                if not source.is_file():
                    continue
                entity = self.file(source, _rel(source, self.root))
                into.append(entity)
                name = role.rsplit("/", 1)[-1] if role and role.startswith(f"plan:rule/{local(job.rule)}/") else None
                self.example_of(entity, self.rule_fps.get((job.rule, direction, name)))
        tool = self.tool(job.rule)
        self.instruments.add(job.rule)
        where = f" in run {parent}, whose outputs this fork copied instead of running it again" if parent else ""
        wildcards = f" with wildcards {job.wildcards}" if job.wildcards else ""
        # a job a cancel killed has no end of its own: it ended when the run did
        end = rp.crate_time(job.end) or (rp.crate_time(run_end) if job.status in ("cancelled", "failed") else None)
        ident = f"#job-{_slug(parent) + '-' if parent else ''}{_slug(job.suffix)}"
        action = self.action(tool, ident, f"job {job.suffix}" + (f" (run {parent})" if parent else ""),
                             f"Snakemake job of rule {job.rule}{wildcards}{where}: {job.status or 'unknown'}",
                             job.status, rp.crate_time(job.start), end, job.error, inputs, outputs)
        control = self.add(f"#control-{ident[1:]}", {"@type": "ControlAction", "name": f"orchestrate {job.rule}",
                                                     "description": f"Snakemake scheduling the job of rule {job.rule}"})
        control["instrument"] = self.steps[job.rule]
        control["object"] = action
        if self.person is not None:
            control["agent"] = self.person
        return control

    def run(self, license: str):
        self.describe_root(license)
        self.workflow()
        objects, results = self.parameters()
        run_action = self.run_action(objects, results, f"snakegate run {self.run_id} of workflow {self.wf_id} "
                                                       f"{self.manifest.get('version', '')}: {self.status}")
        jobs = rp.jobs(self.prov)
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
        error = plain(self.run_attrs.get("sg:error")) or (f"cancelled by {self.record['cancelled_by']}"
                                                           if self.record.get("cancelled_by") else None)
        return self.action(self.main, f"#run-{_slug(self.run_id)}", f"run {self.run_id} of {self.wf_id}", description,
                           self.status, start, end, error, objects, results)

    def finish(self, run_action, controls: list):
        """Snakemake's OrganizeAction over the ControlActions, every action mentioned from the root, the records,
        the README; the crate."""
        engine = self.add(SNAKEMAKE_IRI, {"@type": "SoftwareApplication", "name": "Snakemake", "url": SNAKEMAKE_IRI,
                                          "softwareVersion": rp.engine_version(self.prov) or "unknown"})
        organize = self.add(f"#orchestrate-{_slug(self.run_id)}", {
            "@type": "OrganizeAction", "name": f"Snakemake orchestrating run {self.run_id}",
            "description": f"Snakemake executing the jobs of run {self.run_id}"})
        organize["instrument"] = engine
        organize["result"] = run_action
        if controls:
            organize["object"] = controls
        for key in ("startTime", "endTime"):
            if run_action.get(key):
                organize[key] = run_action[key]
        if self.person is not None:
            organize["agent"] = self.person
        self.crate.root_dataset["mentions"] = [*self.actions, organize, *controls]
        self.records(run_action)
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


# ---- helpers -------------------------------------------------------------------------------------
def _folder_files(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES and not d.startswith("."))
        out += [Path(dirpath) / n for n in sorted(filenames)
                if n not in IGNORED_NAMES and not n.endswith(".pyc") and not n.startswith(".")]
    return out


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return f"external/{Path(path).name}"


def _resolve(root: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else Path(root) / path


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in str(text)).strip("-") or "x"


def validate(crate_path: Path, profile: str = "provenance-run-crate-0.5", severity: str = "required") -> list[str]:
    """Problems roc-validator finds at `severity` and above (an empty list means the crate passes).

    roc-validator runs as its own command, offline (validate.py); ValidatorMissing when there is none."""
    from snakegate.provenance.rocrate import validate as rocval

    return [str(issue) for issue in rocval.validate(Path(crate_path), profile, severity)]
