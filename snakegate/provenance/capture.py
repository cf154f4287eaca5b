"""Build and write one run's W3C PROV record: runs/<run_id>/prov.json, prov.provn, prov.ttl (prov.ttl made when
first asked for, prov.provn too for big runs, see document.py).

`capture()` is called by the top-level Snakefile's onsuccess/onerror handlers
(through snakegate.run.entry) and by the runner after a cancel. Core passes plain
data in (the manifest and schema as dicts, folders as paths); everything else
is read from the run folder, Snakemake's job records, git and the interpreter.
The record uses the vocabularies CWLProv uses (wfprov, wfdesc), schema.org
where it has the term, and snakegate's own terms (`sg:`, defined with labels
and comments in snakegate.ttl next to this module). The parts live in capture_workflow.py,
capture_gate.py and capture_run.py (mixins of the builder here), capture_jobs.py and capture_terms.py:

- the run: a wfprov:WorkflowRun associated with Snakemake (a
  wfprov:WorkflowEngine) whose plan is the workflow (prov:Plan,
  wfdesc:Workflow, one wfdesc:Process step per rule), with snakegate, Python
  and the person who ran it; started by the gated invocation, informed by the
  gate's decision (an activity that used the inputs it hashed and generated the
  invocation) and, for a chat run, by the approval;
- its jobs (capture_jobs.py) with their files (runfiles.py: content-addressed
  entities with the path as an attribute);
- the environment (environment.py): Python distributions, Python, OS, CPUs,
  host name unless the settings opt out, the manifest's tools with their
  versions, and `builtin:` datasets with the library that provides them;
- the workflow (id, version, content hash, git tree SHA), the registry commit
  and whether it was dirty ("no git" outside a repository), the invocation
  (id, params with `x-sensitive` values as their keyed hash (secrets.py), and
  the same values scrubbed from shell commands, params and errors), the config
  file; a rerun and a fork are informed by their parent run, their config
  derives from the parent's, a fork's invocation is a revision of the parent's
  and the outputs it copied are derived from the parent's files; a rerun's
  outputs with the parent's bytes are alternates of the parent's;
- what run.json says about how the run ended (failure, cancel, missing
  outputs, inputs changed after the gate) and its verdict, in W3C DQV (`verdict()`).

Identifiers are fixed (vocab.NAMESPACES) and no wall-clock time is recorded
except the activities' own times, so two captures of the same run folder on the
same machine give the same PROV-JSON and PROV-N.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

from snakegate.provenance import environment, gitinfo, jobfacts, runstore, secrets
from snakegate.provenance import jobs as jobrecords
from snakegate.provenance.capture_gate import GatePart
from snakegate.provenance.capture_jobs import JobRecorder
from snakegate.provenance.capture_run import RunPart
from snakegate.provenance.capture_terms import (  # noqa: F401 (re-exported)
    APPLICATION,
    SOFTWARE,
    action_status,
    run_iri,
)
from snakegate.provenance.capture_workflow import WorkflowPart
from snakegate.provenance.document import Document, Many, Q, local
from snakegate.provenance.hashing import canonical_json, sha256_text
from snakegate.provenance.runfiles import BOOKKEEPING, Files  # noqa: F401 (BOOKKEEPING: re-exported)
from snakegate.provenance.runrecords import (
    artifact_params,
    run_config_params,
    run_secrets,
    scrub,
)

TARGET_RULES = ("snakegate_all",)


class _Builder(WorkflowPart, GatePart, RunPart):
    """One run's PROV document, built in the order `build()` gives; the workflow, gate and run parts are
    mixins in capture_workflow.py, capture_gate.py and capture_run.py."""

    def __init__(self, run_dir: Path, registry_root: Path, workdir: Path, manifest: dict, schema: dict,
                 workflow_folder: Path, status: str, rule_prefix: str, record_hostname: bool):
        self.run_dir = Path(os.path.abspath(run_dir))
        self.root = Path(os.path.abspath(registry_root))
        self.manifest = manifest
        self.schema = schema or {}
        self.workflow_folder = Path(os.path.abspath(workflow_folder))
        self.status = status
        self.rule_prefix = rule_prefix
        self.record_hostname = record_hostname
        self.doc = Document()
        declared = {os.path.normpath(self.run_dir / out["path"]): (name, out.get("type"))
                    for name, out in (manifest.get("outputs") or {}).items()}
        self.files = Files(self.doc, self.root, Path(os.path.abspath(workdir)), self.run_dir, declared,
                           host_paths=record_hostname)
        self.record = runstore.read_run(self.run_dir)
        self.invocation = runstore.read_json(self.run_dir / runstore.INVOCATION_JSON)
        self.run_id = self.record.get("run_id") or self.run_dir.name
        self.run_ident = run_iri(self.record, self.run_id)
        inv = self.invocation.get("invocation") or {}
        self.key, self.secrets = run_secrets(self.run_dir, self.root, self.schema)
        self.scrub = scrub
        self.params = secrets.redact(self.schema, inv.get("params") or {}, self.key)[0] if self.key else \
            (inv.get("params") or {})
        self.rules_io = {name: (io or {}) for name, io in (manifest.get("rules") or {}).items()}
        self.agent_ids: dict[str, str] = {}
        self.tools: dict[str, str] = {}  # external tool name -> its agent (jobs whose command runs it use it)
        self.steps: dict[str, str] = {}
        self.plan = ""

    # agents and plan -----------------------------------------------------------------------------
    def agents(self) -> None:
        doc = self.doc
        person = gitinfo.current_person(self.root)
        person_id = f"agent:person/{local(person.email or person.name)}"
        doc.agent(person_id, {"prov:type": Many((Q("prov:Person"), Q("schema:Person"))), "prov:label": person.name,
                              "schema:name": person.name, "schema:email": person.email,
                              "sg:identitySource": person.source})
        ids = {"person": person_id}
        python = environment.host_facts(False)
        for key, label, version, url in (
                ("snakegate", "snakegate", environment.distribution_version("snakegate"), None),
                ("snakemake", "Snakemake", environment.distribution_version("snakemake"),
                 "https://snakemake.readthedocs.io"),
                ("python", "Python", python["python_version"], "https://www.python.org")):
            types = (SOFTWARE, Q("wfprov:WorkflowEngine"), APPLICATION) if key == "snakemake" else (SOFTWARE,
                                                                                                 APPLICATION)
            attrs = {"prov:type": Many(types), "prov:label": f"{label} {version or ''}".strip(),
                     "schema:name": label, "schema:softwareVersion": version or "unknown", "schema:url": url}
            if key == "python":
                attrs["sg:implementation"] = python["python_implementation"]
            ids[key] = doc.agent(f"agent:{key}", attrs)
        doc.delegated(ids["snakemake"], person_id)
        self.agent_ids = ids

    # the environment -----------------------------------------------------------------------------
    def environment(self) -> None:
        doc = self.doc
        facts = environment.host_facts(self.record_hostname)
        distributions = environment.python_distributions()
        attrs = {"prov:type": Q("sg:Environment"), "prov:label": f"{facts['os']} {facts['machine']}, Python "
                 f"{facts['python_version']}", "sg:pythonVersion": facts["python_version"],
                 "sg:pythonImplementation": facts["python_implementation"], "sg:os": facts["os"],
                 "sg:osRelease": facts["os_release"], "sg:platform": facts["platform"],
                 "sg:machine": facts["machine"], "sg:cpuCount": facts["cpu_count"],
                 "sg:usableCpuCount": facts["usable_cpus"], "sg:hostname": facts.get("hostname"),
                 "schema:softwareRequirements": Many(distributions) if len(distributions) > 1 else
                 (distributions[0] if distributions else None)}
        ident = doc.entity(f"env:{sha256_text(canonical_json([facts, distributions]))}", attrs)
        doc.used(self.run_ident, ident, role="sg:runEnvironment")
        for tool in environment.tool_facts(self.manifest.get("tools")):
            path = tool["path"] if self.record_hostname or not tool["path"] else os.path.basename(tool["path"])
            agent = doc.agent(f"agent:tool/{local(tool['name'])}", {
                "prov:type": Many((SOFTWARE, APPLICATION)), "prov:label": f"{tool['name']} {tool['version'] or ''}"
                .strip(), "schema:name": tool["name"], "schema:softwareVersion": tool["version"] or "unknown",
                "sg:executable": path, "schema:sha256": tool["sha256"], "sg:found": tool["path"] is not None})
            doc.associated(self.run_ident, agent, role="sg:externalTool")
            self.tools[tool["name"]] = agent

    def builtins(self) -> dict[str, str]:
        """builtin value -> dataset entity, used by the run (and, in capture_jobs, the jobs naming it)."""
        out = {}
        inv = self.invocation.get("invocation") or {}
        for data in environment.builtin_datasets(self.schema, inv.get("params") or {}):
            dist = data["distribution"]
            provider = f"{dist}=={data['version']}" if dist and data["version"] else dist
            ident = self.doc.entity(f"builtin:{local(data['name'])}/{local(provider or 'unknown')}", {
                "prov:type": Many((Q("sg:BuiltinDataset"), Q("schema:Dataset"))), "prov:label": data["value"],
                "schema:name": data["name"], "sg:builtin": data["value"], "sg:providedBy": provider or "unknown"})
            self.doc.used(self.run_ident, ident, role="sg:builtinDataset")
            out[data["value"]] = ident
        return out

    # all -----------------------------------------------------------------------------------------
    def build(self, log_text: str) -> Document:
        candidates = [self.files.key(p) for p in self.files.run_files()]
        jobs, summary = jobrecords.read_jobs(self.files.workdir, candidates, log_text, self.rule_prefix,
                                             TARGET_RULES)
        self.job_stderr_and_failure(jobs)
        # executor, scheduler job id, node, and each job's own start and end (provenance/jobfacts.py)
        jobfacts.attach(jobs, self.run_dir, self.record, self.rule_prefix, self.record_hostname)
        planned = sum(n for rule, n in summary.planned.items() if rule not in TARGET_RULES) if summary.planned else None
        doc = self.doc
        self.agents()
        # the run comes first in the document; its attributes that depend on the jobs are filled below
        doc.activity(self.run_ident)
        wf = self.workflow()
        inv = self.invocation_entity()
        self.parameter_values(inv)
        gate = self.gate(inv)
        self.staging(gate)
        config = self.config_entity(inv)
        run_start = runstore.parse_time(self.record.get("started"))
        doc.used(self.run_ident, inv, role="sg:gatedInvocation")
        doc.started(self.run_ident, inv, gate, run_start)
        doc.informed(self.run_ident, gate)
        doc.associated(self.run_ident, self.agent_ids["snakemake"], plan=wf, role="sg:workflowEngine")
        doc.associated(self.run_ident, self.agent_ids["snakegate"], role="sg:gateAndRunner")
        doc.associated(self.run_ident, self.agent_ids["python"], role="sg:interpreter")
        doc.associated(self.run_ident, self.agent_ids["person"], role="sg:operator")
        self.origin(inv)
        self.environment()
        builtins = self.builtins()
        artifacts = {self.files.abspath(k): v for k, v in artifact_params(self.schema, self._config_params()).items()}
        failed_ident = JobRecorder(self).record(jobs, artifacts, builtins)
        self.seeded(jobs)
        self.lineage(config, inv)
        self.run_activity(jobs, failed_ident, planned)
        self.refinement()
        self.verdict()
        if not self.record_hostname:
            hide_host_paths(doc, self.root)
        return doc

    def job_stderr_and_failure(self, jobs) -> None:
        """Each job's stderr file (runs/<id>/stderr/, runstore.job_stderr_path) is among its logs; the failed
        job carries run.json's failure facts (its own exception, message and last lines) and the cluster
        logs copied into the run folder."""
        failure = self.record.get("failure") if isinstance(self.record.get("failure"), dict) else {}
        copies = [str(self.run_dir / c["path"]) for c in failure.get("cluster_logs") or [] if c.get("path")]
        for job in jobs:
            path = str(runstore.job_stderr_path(self.run_dir, job.rule, job.wildcards))
            if path not in job.logs and os.path.isfile(path):
                job.logs.append(path)
            if failure and job.status == "failed" and job.rule == failure.get("rule"):
                job.error = self.record.get("error") or job.error
                job.facts.setdefault("sg:failureException", failure.get("exception"))
                job.facts.setdefault("sg:failureMessage", self.scrub(failure.get("message"), self.secrets, self.key))
                if failure.get("log_tail"):
                    job.facts.setdefault("sg:logTail", self.scrub("\n".join(failure["log_tail"]), self.secrets,
                                                                  self.key))
                job.logs.extend(c for c in copies if c not in job.logs)
                failure = {}  # the first failed job of that rule only

    def _config_params(self) -> dict:
        """The params as Snakemake got them (absolute input paths) from config.yaml."""
        params = run_config_params(self.run_dir)
        if params is not None:
            return params
        inv = (self.invocation.get("invocation") or {}).get("params") or {}
        return {k: (str(self.root / v) if isinstance(v, str) and (self.root / v).is_file() else v)
                for k, v in inv.items()}


def hide_host_paths(doc: Document, root: Path) -> None:
    """With `record_hostname = false`: no absolute path of this machine in any attribute (a job's command names
    its stderr file, an error its log): the registry root becomes `.`, the home folder `~`."""
    root_text = str(root).rstrip("/")
    home = os.path.expanduser("~").rstrip("/")
    swaps = [(root_text + "/", ""), (root_text, ".")] + ([(home + "/", "~/"), (home, "~")] if len(home) > 1 else [])

    def clean(value):
        if type(value) is str:
            for old, new in swaps:
                if old in value:
                    value = value.replace(old, new)
            return value
        if isinstance(value, Many):
            return Many([clean(v) for v in value])
        return value

    for element in doc.elements.values():
        element[3] = {k: clean(v) for k, v in element[3].items()}
    doc.relations[:] = [(kind, formal, {k: clean(v) for k, v in attrs.items()}) for kind, formal, attrs in doc.relations]


def _log_text(run_dir: Path, snakemake_log: str | None) -> str:
    for candidate in (snakemake_log, Path(run_dir) / runstore.SNAKEMAKE_LOG):
        if candidate and Path(candidate).is_file():
            return Path(candidate).read_text(encoding="utf-8", errors="replace")
    return ""


def build(run_dir: Path, registry_root: Path, workdir: Path, manifest: dict, schema: dict,
          workflow_folder: Path, snakemake_log: str | None, status: str, rule_prefix: str, *,
          record_hostname: bool = True) -> Document:
    """The run's PROV document (nothing written)."""
    builder = _Builder(run_dir, registry_root, workdir, manifest, schema, workflow_folder, status, rule_prefix,
                       record_hostname)
    # a big run allocates ~10 objects per job that all live until the end: the cyclic collector
    # would only rescan them again and again
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return builder.build(_log_text(run_dir, snakemake_log))
    finally:
        if was_enabled:
            gc.enable()


def capture(run_dir: Path, registry_root: Path, workdir: Path, manifest: dict, schema: dict,
            workflow_folder: Path, snakemake_log: str | None, status: str, rule_prefix: str, *,
            record_hostname: bool = True) -> list[Path]:
    """Build the run's PROV document and write prov.json (and, up to the eager limit, prov.provn; prov.ttl is made
    when first asked for, document.ensure_rendering).
    `record_hostname=False` (settings: `[provenance] record_hostname = false`) leaves the host name out."""
    doc = build(run_dir, registry_root, workdir, manifest, schema, workflow_folder, snakemake_log, status,
                rule_prefix, record_hostname=record_hostname)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return doc.write(Path(run_dir))
    finally:
        if was_enabled:
            gc.enable()
