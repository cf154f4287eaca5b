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
from snakegate.provenance import runstore, vocab
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
        """The tools of `rules` that an action names as instrument: a tool in a workflow's hasPart must be one
        (Provenance Run Crate). In a run that stopped (failed, cancelled, interrupted), or one where no job ran
        at all, each rule with no job action gets an action that says no job of it started (not_started), so
        every rule is a part; in a run that succeeded, a rule none of whose jobs was needed is a step of the
        workflow but not one of its parts."""
        rules = list(rules)
        if self.status != "succeeded" or not any(r in self.instruments for r in rules):
            for rule in rules:
                if rule not in self.instruments:
                    self.not_started(rule)
        return [self.tools[r] for r in rules if r in self.instruments]

    def not_started(self, rule: str):
        """The action of a rule whose jobs never started in this run: failed (it did not happen), with why; no
        start, and the run's end as its end (the moment it was settled that it would not happen)."""
        why = {"failed": "the run failed", "cancelled": "the run was cancelled",
               "interrupted": "the run was interrupted"}.get(self.status, f"the run ended {self.status}")
        ident = f"#not-started-{_slug(rule)}"
        action = self.action(self.tools[rule], ident, f"rule {rule}: no job started",
                             f"No job of rule {rule} started in run {self.run_id}: {why} before one did.",
                             "not-started", None, rp.crate_time(self.run_attrs.get("prov:endTime")),
                             f"not started: {why} before any job of rule {rule} started",
                             [], [])
        self.instruments.add(rule)
        self.extra_controls.append(self.control(rule, action, f"Snakemake had rule {rule} in the run; {why} before "
                                                              "any job of it started"))
        return action

    def control(self, rule: str, action, description: str):
        """The ControlAction of one step's execution: the step as instrument, the tool's action as object."""
        control = self.add(f"#control-{action.id[1:]}", {"@type": "ControlAction", "name": f"orchestrate {rule}",
                                                         "description": description})
        control["instrument"] = self.steps[rule]
        control["object"] = action
        if self.person is not None:
            control["agent"] = self.person
        return control

    def partial_results(self, jobs: list, results: list) -> list:
        """The run's results: its declared outputs that exist; for a run that made none (a failed or stopped
        run), every file its jobs did make (partial outputs and logs)."""
        if results:
            return results
        out = []
        for job in jobs:
            for path, _role in job.generated:
                source = _resolve(self.root, path)
                if source.is_file():
                    entity = self.file(source, _rel(source, self.root))
                    if entity not in out:
                        out.append(entity)
        return out

    def parameters(self) -> tuple[list, list]:
        """(objects, results) of the run action: input files and PropertyValues, declared outputs."""
        properties = self.schema.get("properties") or {}
        invocation = (runstore.read_json(self.run_dir / runstore.INVOCATION_JSON).get("invocation") or {})
        params = invocation.get("params") or {}
        if self.key is not None:
            params = secretkeys.redact(self.schema, params, self.key)[0]
        param_fps, output_fps = {}, {}
        for name, sub in properties.items():
            value = params.get(name)
            # an artifact param whose value is no file (a builtin dataset's name) maps to a PropertyValue: Text
            is_file = sub.get("x-artifact") and not (isinstance(value, str) and value.startswith("builtin:"))
            kind = "File" if is_file else value_type(sub)
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
        for name in properties:
            if name not in params:  # an optional param the run left unset: said so, and no value invented
                self.example_of(self.add(f"#pv-{_slug(name)}", {
                    "@type": "PropertyValue", "name": name,
                    "description": f"{name} was not set in this run: the workflow's own behaviour without it applied"}),
                    param_fps[name])
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
        ident = f"#job-{_slug(parent) + '-' if parent else ''}{_slug(job.suffix)}"
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
        return self.action(self.main, f"#run-{_slug(self.run_id)}", f"run {self.run_id} of {self.wf_id}", description,
                           self.status, start, end, error, objects, results)

    def finish(self, run_action, controls: list):
        """Snakemake's OrganizeAction over the ControlActions, every action mentioned from the root, the records,
        the README; the crate."""
        controls = [*controls, *self.extra_controls]
        self.records(run_action)
        engine = self.add(SNAKEMAKE_IRI, {"@type": "SoftwareApplication", "name": "Snakemake", "url": SNAKEMAKE_IRI,
                                          "softwareVersion": rp.engine_version(self.prov) or "unknown"})
        organize = self.add(f"#orchestrate-{_slug(self.run_id)}", {
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

    def iri(self, qname: str) -> str:
        """A PROV record's prefixed name (`agent:snakegate`) as the absolute IRI it stands for."""
        prefix, _, rest = str(qname).partition(":")
        base = (self.prov.get("prefix") or {}).get(prefix) or vocab.NAMESPACES.get(prefix)
        return f"{base}{rest}" if base else f"#{_slug(qname)}"

    def external_tool(self, agent_id: str):
        """An external tool (workflow.yaml `tools:`) as the record found it: name, version, executable's sha256."""
        tool = self.external.get(agent_id) or {"name": agent_id.rsplit("/", 1)[-1]}
        ident = self.iri(agent_id)
        return self.add(ident, {
            "@type": "SoftwareApplication", "name": tool.get("name"), "url": ident,
            "softwareVersion": tool.get("version") or "unknown",
            **({"sha256": tool["sha256"]} if tool.get("sha256") else {}),
            "description": f"external tool {tool.get('name')} (workflow.yaml `tools:`), as found when the run ended"})

    def context(self, engine, run_action) -> list:
        """What a reader needs without opening prov.json, from the PROV record: snakegate and Python with their
        versions (snakegate returned as a further instrument of the OrganizeAction, Python as Snakemake's
        requirement), the registry snapshot (git commit) the workflow is part of, and a chat's approval: an
        AcceptAction by the person, of the invocation the model proposed (its backend as provider), with the
        transcript's sha256."""
        found = {s["key"]: s for s in rp.software(self.prov)}
        extra = []
        # the same IRIs as the PROV record's agents and snapshot (agent:python, agent:snakegate, registry:<commit>)
        if found.get("python"):
            engine["softwareRequirements"] = self.add(self.iri("agent:python"), {
                "@type": "SoftwareApplication", "name": "Python", "url": "https://www.python.org",
                "softwareVersion": found["python"]["version"] or "unknown"})
        if found.get("snakegate"):
            ident = self.iri("agent:snakegate")
            extra.append(self.add(ident, {
                "@type": "SoftwareApplication", "name": "snakegate", "url": ident,
                "softwareVersion": found["snakegate"]["version"] or "unknown",
                "description": "the gate that proved the invocation and the runner that handed it to Snakemake"}))
        snaps = rp.snapshots(self.prov)
        if snaps and snaps[0].get("commit"):
            snap = snaps[0]
            state = "with uncommitted changes" if snap.get("dirty") in (True, "true") else "clean"
            ident = self.iri(snap["id"])
            self.main["isPartOf"] = self.add(ident, {
                "@type": "SoftwareSourceCode", "name": f"workflow registry at git commit {snap['commit']}",
                "version": snap["commit"], "identifier": snap["commit"], "url": ident,
                "description": f"the registry snapshot the workflow copy that ran was made from ({state}"
                               + (f", branch {snap['branch']}" if snap.get("branch") else "")
                               + (f"; the workflow folder's git tree {snap['tree']}" if snap.get("tree") else "") + ")"})
        self.approval(run_action)
        return extra

    def approval(self, run_action) -> None:
        """A chat's (or MCP client's) approval of the invocation, mentioned from the root."""
        found = rp.approval(self.prov)
        if not found or not found.get("approver"):
            return
        person = self.add(f"#person-{_slug(found['approver'])}", {"@type": "Person", "name": found["approver"]})
        props = {"@type": "AcceptAction", "name": f"{found['approver']} approved the invocation",
                 "description": f"{found['approver']} approved the invocation proposed by model {found.get('model')}"
                                f" through {found.get('backend')}; the run followed"}
        if found.get("at"):
            props["endTime"] = rp.crate_time(found["at"])
        accept = self.add(f"#approval-{_slug(self.run_id)}", props)
        accept["agent"] = person
        invocation = self.files.get(f"{self.run_rel}/{runstore.INVOCATION_JSON}")
        accept["object"] = invocation if invocation is not None else run_action
        accept["result"] = run_action
        if found.get("model"):
            backend_id = self.iri(f"agent:backend/{local(found.get('backend') or 'unknown')}")
            backend = self.add(backend_id, {"@type": "SoftwareApplication", "name": found.get("backend") or "unknown",
                                            "url": backend_id})
            model_id = self.iri(found["model_id"]) if found.get("model_id") else f"#model-{_slug(found['model'])}"
            model = self.add(model_id, {
                "@type": "SoftwareApplication", "name": found["model"], "provider": backend, "url": model_id,
                **({"alternateName": found["answered_by"]} if found.get("answered_by") not in (None, found["model"])
                   else {})})
            accept["participant"] = model
        if found.get("transcript_sha256") or found.get("conversation_id"):
            accept["instrument"] = self.add(f"#transcript-{_slug(self.run_id)}", {
                "@type": "CreativeWork", "name": "the chat up to the approval",
                **({"sha256": found["transcript_sha256"]} if found.get("transcript_sha256") else {}),
                **({"identifier": found["conversation_id"]} if found.get("conversation_id") else {})})
        self.mentioned.append(accept)

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


def value_type(schema: dict) -> str:
    """The FormalParameter additionalType of a contract property: its JSON Schema type, or of a union such as
    ["number", "null"] the one non-null type (Text when the union has several or the schema says none)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        named = [k for k in kind if isinstance(k, str) and k != "null"]
        kind = named[0] if len(named) == 1 else None
    return _TYPES.get(kind, "Text") if isinstance(kind, str) else "Text"


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
