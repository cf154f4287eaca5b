"""Build and write one run's W3C PROV record: runs/<run_id>/prov.json, prov.provn, prov.ttl (the last two
deferred for big runs, see document.py).

`capture()` is called by the top-level Snakefile's onsuccess/onerror handlers
(through snakegate.run.entry) and by the runner after a cancel. Core passes plain
data in (the manifest and schema as dicts, folders as paths); everything else
is read from the run folder, Snakemake's job records, git and the interpreter.
The record uses the vocabularies CWLProv uses (wfprov, wfdesc), schema.org
where it has the term, and snakegate's own terms (`sg:`, defined with labels
and comments in snakegate.ttl next to this module):

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

from snakegate.provenance import environment, gitinfo, jobfacts, runstore, secrets, snapshot, vocab
from snakegate.provenance import jobs as jobrecords
from snakegate.provenance import origin as originrec
from snakegate.provenance.capture_jobs import JobRecorder
from snakegate.provenance.document import Document, Many, Q, local
from snakegate.provenance.hashing import canonical_json, sha256_text, workflow_hash
from snakegate.provenance.runfiles import BOOKKEEPING, Files, under  # noqa: F401 (BOOKKEEPING: re-exported)
from snakegate.provenance.runrecords import artifact_params, run_config_params, run_secrets, scrub

TARGET_RULES = ("snakegate_all",)
SOFTWARE = Q("prov:SoftwareAgent")
APPLICATION = Q("schema:SoftwareApplication")


def run_iri(record: dict, run_id: str) -> str:
    """A run's IRI: `run:<run_uuid>`, the UUID minted when its run.json was first written (runstore.update_run),
    so that the same config run in two clones by two people is two runs; `run:<run id>` for a run recorded
    before run UUIDs."""
    uuid = record.get("run_uuid") if isinstance(record, dict) else None
    return f"run:{local(uuid)}" if isinstance(uuid, str) and uuid else f"run:{local(run_id)}"


def action_status(status: str | None) -> Q:
    """schema.org's actionStatus of a run or job status: did it succeed (the finer status is `sg:status`)."""
    if status == "succeeded":
        return Q("schema:CompletedActionStatus")
    return Q("schema:ActiveActionStatus") if status == "running" else Q("schema:FailedActionStatus")


def _strings(value) -> Many | str | None:
    """A run.json list as a multi-valued attribute (None when empty)."""
    items = [str(v) for v in value] if isinstance(value, list) else ([str(value)] if value else [])
    return None if not items else (items[0] if len(items) == 1 else Many(items))


class _Builder:
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

    def _git_folder(self, content_hash: str) -> Path | None:
        """Where the workflow's git tree is read for a run that recorded no source (runs made before
        source.json): the folder itself, or, for a run's copy (runs/<id>/workflow/, outside git), the registry
        folder it was copied from while that still holds the same content; None when the registry has moved
        on (its tree would not be what ran)."""
        if self.run_dir not in self.workflow_folder.parents:
            return self.workflow_folder
        source = self.root / "workflows" / str(self.manifest.get("id") or "")
        return source if source.is_dir() and workflow_hash(source) == content_hash else None

    def _snapshot_entity(self, facts: dict, current: bool = False) -> str:
        """A registry snapshot: its git commit (`schema:version`, standard; `sg:gitCommit`), or why there is none.
        `current`: the registry as it is when the record is written, beside the pinned snapshot that ran."""
        commit = facts.get("commit")
        if commit:
            ident = f"registry:{commit}"
            attrs = {"prov:type": Many((Q("sg:RegistrySnapshot"), Q("schema:SoftwareSourceCode"))),
                     "prov:label": f"registry at commit {commit[:12]}", "schema:version": commit,
                     "sg:gitCommit": commit, "sg:gitDirty": facts.get("dirty"), "sg:gitBranch": facts.get("branch")}
        else:
            ident = "registry:no-git" if not current else "registry:no-git/current"
            attrs = {"prov:type": Q("sg:RegistrySnapshot"), "sg:git": facts.get("git") or "no git"}
        if current:
            attrs["prov:label"] = f"the registry when this record was written{f' (commit {commit[:12]})' if commit else ''}"
            attrs["sg:gitTree"] = facts.get("tree")
            attrs["sg:gitTreeDirty"] = facts.get("tree_dirty")
        self.doc.entity(ident, attrs)
        return ident

    def _registry_entity(self, git) -> str:
        """The registry snapshot of a git state (gitinfo.GitState) read now."""
        facts = ({"commit": git.commit, "dirty": git.dirty, "branch": git.branch} if git.available and git.commit
                 else {"git": git.reason or "no git"})
        return self._snapshot_entity(facts)

    def pinned_snapshot(self, home: Path, content_hash: str, folder: Path | None) -> tuple[dict, str]:
        """(source facts, snapshot entity) of the workflow copy in `home` (its source.json, snapshot.py); a run
        made before source.json: the registry as it is now, with the tree of `folder` (where the tree is read,
        see _git_folder) only while it still holds what ran."""
        facts = snapshot.read(home)
        if facts is None:
            git = gitinfo.git_state(self.root, folder)
            facts = ({"commit": git.commit, "dirty": git.dirty, "branch": git.branch, "tree": git.workflow_tree,
                      "tree_dirty": git.workflow_dirty} if git.available and git.commit else
                     {"git": git.reason or "no git"})
        return facts, self._snapshot_entity(facts)

    def current_registry(self, pinned: dict, wf_id: str) -> None:
        """The registry as it is when the record is written, when its commit is not the pinned one (a rerun of an
        old run, a registry that moved on during the run): used by the run, its workflow folder's tree beside it."""
        folder = self.root / "workflows" / wf_id
        now = snapshot.of_git(folder if folder.is_dir() else self.root)
        if now.get("commit") == pinned.get("commit") and now.get("tree") == pinned.get("tree"):
            return
        ident = self._snapshot_entity(now, current=True)
        self.doc.used(self.run_ident, ident, role="sg:currentRegistry")

    def workflow(self) -> str:
        content_hash = workflow_hash(self.workflow_folder)
        facts, registry_id = self.pinned_snapshot(self.run_dir, content_hash, self._git_folder(content_hash))
        wf_id = self.manifest.get("id") or self.workflow_folder.name
        _, shown = self.files.shown(str(self.workflow_folder))
        ident = f"wf:{local(wf_id)}/{content_hash}"
        # steps and roles live under the plan's own IRI: plan:rule/<rule>, plan:rule/<rule>/input/<name>
        self.doc.namespaces["plan"] = f"{vocab.NAMESPACES['wf']}{local(wf_id)}/{content_hash}/"
        inv = self.invocation.get("invocation") or {}
        self.doc.entity(ident, {
            "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Workflow"), Q("schema:SoftwareSourceCode"))),
            "prov:label": self.manifest.get("title") or wf_id, "schema:name": self.manifest.get("title") or wf_id,
            "schema:version": self.manifest.get("version"), "dct:identifier": wf_id, "sg:workflowId": wf_id,
            "sg:contentHash": content_hash,
            "sg:gatedContentHash": inv.get("workflow_hash") if inv.get("workflow_hash") != content_hash else None,
            "prov:location": shown, "sg:gitTree": facts.get("tree"), "sg:gitTreeDirty": facts.get("tree_dirty"),
            "sg:copiedVia": Q(self.sibling_iri(facts["via_run"])) if facts.get("via_run") else None,
            "dct:isPartOf": Q(registry_id)})
        self.plan = ident
        self.current_registry(facts, str(wf_id))
        self.contract()
        for rule in self.manifest.get("rules") or {}:
            self.step(rule)
        return ident

    def contract(self) -> None:
        """The workflow's parameters and declared outputs as wfdesc:Input / wfdesc:Output of the workflow."""
        for name, sub in (self.schema.get("properties") or {}).items():
            self.parameter(self.plan, f"plan:param/{local(name)}", "wfdesc:Input", name,
                           sub.get("x-artifact") if isinstance(sub, dict) else None,
                           sub.get("description") if isinstance(sub, dict) else None)
        for name, out in (self.manifest.get("outputs") or {}).items():
            self.parameter(self.plan, f"plan:output/{local(name)}", "wfdesc:Output", name, out.get("type"),
                           out.get("description"))

    def parameter(self, owner: str, ident: str, kind: str, name: str, artifact_type: str | None,
                  description: str | None = None) -> str:
        """A parameter (wfdesc:Input or wfdesc:Output) of a workflow or one of its steps, linked from it."""
        if ident not in self.doc.elements:
            self.doc.entity(ident, {"prov:type": Many((Q(kind), Q("wfdesc:Parameter"))), "prov:label": name,
                                    "schema:name": name, "sg:artifactType": artifact_type,
                                    "schema:description": description})
            self.doc.add_values(owner, "wfdesc:hasInput" if kind == "wfdesc:Input" else "wfdesc:hasOutput", Q(ident))
        return ident

    def step(self, rule: str) -> str:
        """The plan step (wfdesc:Process) of a rule, made the first time it is needed."""
        step = self.steps.get(rule)
        if step is None:
            step = self.steps[rule] = self.doc.entity(f"plan:rule/{local(rule)}", {
                "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Process"))), "prov:label": f"rule {rule}",
                "schema:name": rule, "sg:rule": rule})
            self.doc.add_values(self.plan, "wfdesc:hasSubProcess", Q(step))
            self.step_io(rule, step, self.rules_io.get(rule) or {})
        return step

    def step_io(self, rule: str, step: str, io: dict) -> None:
        """A step's declared inputs and outputs (workflow.yaml `rules:`) as its wfdesc parameters: the role IRIs
        its jobs use and generate files with."""
        for direction, kind in (("input", "wfdesc:Input"), ("output", "wfdesc:Output")):
            for name, artifact_type in ((io or {}).get(direction) or {}).items():
                self.parameter(step, f"{step}/{direction}/{local(name)}", kind, name, artifact_type)

    # the invocation, the gate and the approval ----------------------------------------------------
    def invocation_entity(self) -> str:
        inv = self.invocation.get("invocation") or {}
        inv_id = self.invocation.get("invocation_id") or self.record.get("invocation_id") or "unknown"
        ident = f"inv:{local(inv_id)}"
        self.doc.entity(ident, {
            "prov:type": Q("sg:Invocation"), "prov:label": f"invocation {inv_id[:12]}", "dct:identifier": inv_id,
            "sg:invocationId": inv_id, "sg:workflow": inv.get("workflow"), "sg:version": inv.get("version"),
            "sg:workflowHash": inv.get("workflow_hash"), "sg:params": canonical_json(self.params),
            "sg:inputHashes": canonical_json(inv.get("inputs") or {})})
        return ident

    def parameter_values(self, inv_ident: str) -> None:
        """Each parameter's value as the run used it: a schema:PropertyValue (name, value: the value itself, JSON
        text for a list or an object, an `x-sensitive` one as its keyed hash) that is part of the invocation,
        described by the workflow's parameter and used by the run in that parameter's role."""
        for name, value in sorted(self.params.items()):
            role = f"plan:param/{local(name)}"
            shown = value if isinstance(value, (str, int, float, bool)) else canonical_json(value)
            ident = self.doc.entity(f"{inv_ident}/param/{local(name)}", {
                "prov:type": Q("schema:PropertyValue"), "prov:label": f"{name} = {shown}"[:200],
                "schema:name": name, "schema:value": shown, "dct:isPartOf": Q(inv_ident),
                "wfprov:describedByParameter": Q(role) if role in self.doc.elements else None})
            self.doc.used(self.run_ident, ident, role=role if role in self.doc.elements else None)

    def gate(self, inv_ident: str) -> str:
        """The gate's decision: an activity that used each input at the bytes it hashed (a file changed
        since then is another entity) and generated the invocation."""
        gate = self.invocation.get("gate") or {}
        when = gate.get("at") or self.record.get("started")
        ident = self.doc.activity(f"{self.run_ident}/gate", when, when, {
            "prov:type": Q("sg:GateDecision"), "prov:label": "the gate accepted the invocation",
            "sg:decision": "accepted" if gate.get("ok", True) else "refused",
            "sg:invocationId": self.invocation.get("invocation_id"), "sg:check": _strings(gate.get("checks")),
            "sg:snakegateVersion": gate.get("snakegate_version")})
        self.doc.associated(ident, self.agent_ids["snakegate"], role="sg:gateKeeper")
        inv = self.invocation.get("invocation") or {}
        for where, digest in sorted((inv.get("inputs") or {}).items()):
            path = self._param_value(inv.get("params") or {}, where)
            if isinstance(path, str) and digest:
                full = path if os.path.isabs(path) else os.path.normpath(self.root / path)
                ent = self.files.at(full)
                if self.files.by_path[full].sha256 != digest:  # changed since the gate: the bytes it hashed
                    ent = self.files.at(full, digest=(None, digest))
                self.doc.used(ident, ent, role="sg:gatedInput")
        self.doc.generated(inv_ident, ident, role="sg:gatedInvocation")
        return ident

    def staging(self, gate_ident: str) -> None:
        """The gated inputs copied into the run folder before any job (inputs.json, snakegate/run/stage.py):
        each staged copy, which the jobs used, was derived from the data root's file the gate hashed."""
        data = runstore.read_json(self.run_dir / runstore.INPUTS_JSON)
        entries = data.get("inputs") if isinstance(data.get("inputs"), dict) else None
        if not entries:
            return
        when = (self.invocation.get("gate") or {}).get("at") or self.record.get("started")
        ident = self.doc.activity(f"{self.run_ident}/stage", when, when, {
            "prov:type": Q("sg:Staging"), "prov:label": "the gated inputs copied into the run folder",
            "sg:stageMode": data.get("mode"), "wfprov:wasPartOfWorkflowRun": Q(self.run_ident)})
        self.doc.associated(ident, self.agent_ids["snakegate"], role="sg:stager")
        self.doc.informed(ident, gate_ident)
        for _key, entry in sorted(entries.items()):
            source, rel = entry.get("source"), entry.get("path")
            if not isinstance(source, str) or not isinstance(rel, str):
                continue
            full = source if os.path.isabs(source) else os.path.normpath(self.root / source)
            gated = entry.get("gated_sha256") or entry.get("sha256")
            src = self.files.at(full)
            if self.files.by_path[full].sha256 != gated:  # changed since: the bytes that were staged
                src = self.files.at(full, digest=(None, gated))
            copy_path = str(self.run_dir / rel)
            copy = self.files.at(copy_path, {"sg:stagedFrom": self.files.shown(full)[1]})
            if self.files.by_path[copy_path].sha256 != entry.get("sha256"):  # changed in the run folder since
                self.files.at(copy_path, {"sg:changedAfterGeneration": True})
                copy = self.files.at(copy_path, {"sg:stagedFrom": self.files.shown(full)[1]},
                                     digest=(entry.get("size"), entry.get("sha256")))
            self.doc.used(ident, src, role="sg:gatedInput")
            self.doc.generated(copy, ident, role="sg:stagedInput")
            self.doc.derived(copy, src, ident)

    @staticmethod
    def _param_value(params: dict, where: str):
        """The value at a gate path such as `params.table` or `params.samples[2].fastq`."""
        node = params
        for part in where.removeprefix("params.").replace("]", "").replace("[", ".").split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return None
        return node

    def origin(self, inv_ident: str) -> None:
        origin = originrec.read_origin(self.run_dir)
        if origin is None:
            return
        doc = self.doc
        backend_name = origin["proposed_by_backend"]
        backend = doc.agent(f"agent:backend/{local(backend_name)}", {
            "prov:type": Many((SOFTWARE, APPLICATION)), "prov:label": f"{backend_name} backend",
            "schema:name": backend_name})
        model = doc.agent(f"agent:model/{local(backend_name)}/{local(origin['model'])}", {
            "prov:type": Many((SOFTWARE, APPLICATION)), "prov:label": origin["model"], "schema:name": origin["model"],
            "schema:provider": Q(backend), "sg:model": origin["model"], "sg:answeredBy": origin.get("answered_by"),
            "sg:backend": backend_name})
        doc.attributed(inv_ident, model)  # the model proposed the invocation
        approver = doc.agent(f"agent:person/{local(origin['approved_by'])}", {
            "prov:type": Many((Q("prov:Person"), Q("schema:Person"))), "prov:label": origin["approved_by"],
            "schema:name": origin["approved_by"]})
        when = originrec.approval_time(origin)
        approval = doc.activity(f"{self.run_ident}/approval", when, when, {
            "prov:type": Many((Q("sg:Approval"), Q("schema:AcceptAction"))),
            "prov:label": f"{origin['approved_by']} approved the invocation", "schema:agent": Q(approver),
            "schema:object": Q(inv_ident), "sg:conversationId": origin.get("conversation_id")})
        if origin.get("transcript_sha256") or origin.get("conversation_id"):
            transcript = doc.entity(f"{self.run_ident}/transcript", {
                "prov:type": Q("schema:Conversation"), "prov:label": "the chat up to the approval",
                "schema:identifier": origin.get("conversation_id"), "schema:sha256": origin.get("transcript_sha256")})
            doc.used(approval, transcript, role="sg:transcript")
        doc.used(approval, inv_ident, role="sg:approvedInvocation")
        doc.associated(approval, approver, role="sg:approver")
        doc.associated(approval, model, role="sg:proposer")
        doc.informed(self.run_ident, approval)

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

    # the run and its relatives -------------------------------------------------------------------
    def config_entity(self, inv_ident: str) -> str | None:
        config_path = self.run_dir / runstore.CONFIG_YAML
        if not config_path.is_file():
            return None
        config = self.files.at(str(config_path), {"prov:label": "run config (what Snakemake got)"})
        self.doc.derived(config, inv_ident)
        self.doc.used(self.run_ident, config, role="sg:runConfig")
        return config

    def sibling_iri(self, run_id: str) -> str:
        """The IRI of another run of this registry named by its folder (its run_uuid, as run_iri), read from its
        run.json; only a plain folder name is looked up (a source.json is a file in a run folder)."""
        name = str(run_id)
        if name in ("", ".", "..") or "/" in name or "\\" in name:
            return f"run:{local(name)}"
        return run_iri(runstore.read_run(self.run_dir.parent / name), name)

    def lineage(self, config: str | None, inv_ident: str) -> None:
        """A rerun and a fork as relations to their parent run and its files."""
        rec = self.record
        parent = rec.get("parent_run") or rec.get("rerun_of")
        if not parent:
            return
        kind = "sg:Fork" if rec.get("parent_run") else "sg:Rerun"
        parent_dir = self.run_dir.parent / parent
        parent_ident = self.parent_ident = run_iri(runstore.read_run(parent_dir), parent)
        self.doc.activity(parent_ident, None, None, {"prov:type": Q("wfprov:WorkflowRun"), "dct:identifier": parent})
        self.doc.informed(self.run_ident, parent_ident, kind=kind)
        parent_config = parent_dir / runstore.CONFIG_YAML
        if config and parent_config.is_file():
            self.doc.derived(config, self.files.at(str(parent_config)))
        # which run it repeats or changes, in standard terms: a rerun used the invocation its parent used; a
        # fork's invocation is a revision of the one its parent used
        parent_inv = rec.get("parent_invocation_id")
        if kind == "sg:Fork" and parent_inv and f"inv:{local(parent_inv)}" != inv_ident:
            parent_inv_ident = self.doc.entity(f"inv:{local(parent_inv)}", {
                "prov:type": Q("sg:Invocation"), "dct:identifier": parent_inv, "sg:invocationId": parent_inv})
            self.doc.derived(inv_ident, parent_inv_ident, kind="prov:Revision")
            self.doc.used(parent_ident, parent_inv_ident, role="sg:gatedInvocation")
        elif kind == "sg:Rerun":
            self.doc.used(parent_ident, inv_ident, role="sg:gatedInvocation")
        if kind == "sg:Rerun":
            for abspath in sorted(self.files.declared):
                mine = self.files.by_path.get(abspath)
                rel = under(abspath, str(self.run_dir))
                if mine is None or mine.sha256 is None or rel is None:
                    continue
                theirs = self.files.at(str(parent_dir / rel), must_exist=True)
                if theirs is not None and self.files.by_path[str(parent_dir / rel)].sha256 == mine.sha256:
                    self.doc.relation("alternateOf", mine.ident, theirs)

    def refinement(self) -> None:
        """A run of an approved refinement: the approval as a prov:Plan the run used (its id, its sha256 and
        which point of how many this run is); snakegate.refine keeps the approval itself."""
        ref = self.record.get("refinement")
        if not isinstance(ref, dict) or not isinstance(ref.get("id"), str):
            return
        ident = self.doc.entity(f"refinement:{local(ref['id'])}", {
            "prov:type": Q("sg:RefinementApproval"), "prov:label": f"approved refinement {ref['id']}",
            "sg:refinementId": ref["id"], "sg:approvalSha256": ref.get("approval_sha256")})
        self.doc.used(self.run_ident, ident, role="sg:approval")
        self.doc.activity(self.run_ident, None, None, {"sg:refinementPoint": ref.get("point"),
                                                       "sg:refinementPoints": ref.get("points")})

    def seeded(self, jobs) -> None:
        """Files a fork copied from its parent run (the jobs that made them were not re-run)."""
        parent = self.record.get("parent_run")
        if not parent:
            return
        parent_dir = self.run_dir.parent / parent
        made = {self.files.abspath(p) for job in jobs for p in (*job.outputs, *job.logs)}
        copies = [p for p in self.files.run_files() if p not in made
                  and (parent_dir / under(p, str(self.run_dir))).is_file()]
        if not copies:
            return
        doc = self.doc
        seed = doc.activity(f"{self.run_ident}/seed", None, None, {
            "prov:type": Q("sg:CopyFromParent"), "prov:label": f"outputs copied from run {parent}",
            "wfprov:wasPartOfWorkflowRun": Q(self.run_ident)})
        for path in copies:
            source = self.files.at(str(parent_dir / under(path, str(self.run_dir))))
            copy = self.files.at(path)
            doc.used(seed, source, role="sg:parentOutput")
            doc.generated(copy, seed, role="sg:copiedOutput")
            doc.derived(copy, source, seed)

    def run_activity(self, jobs: list, failed_ident: str | None, planned: int | None) -> None:
        rec = self.record
        start = runstore.parse_time(rec.get("started"))
        end = runstore.parse_time(rec.get("ended"))
        if start and end and end < start:
            end = start
        counts = {s: sum(1 for j in jobs if j.status == s)
                  for s in ("succeeded", "failed", "incomplete", "cancelled", "interrupted")}
        parent = rec.get("parent_run")
        parent_ident = getattr(self, "parent_ident", None)
        failure = rec.get("failure") if isinstance(rec.get("failure"), dict) else {}
        changed = [c for c in rec.get("input_changed") or [] if isinstance(c, dict)]
        reused = rec.get("reused") if isinstance(rec.get("reused"), list) else None
        attrs = {
            "prov:type": Q("wfprov:WorkflowRun"), "prov:label": f"{self.manifest.get('id')} run {self.run_id}",
            "dct:identifier": self.run_id, "schema:actionStatus": action_status(self.status),
            "sg:status": self.status, "sg:source": rec.get("source"),
            "wfprov:describedByWorkflow": Q(self.plan) if self.plan else None,
            "prov:location": self.files.shown(str(self.run_dir))[1],
            "sg:failedRule": rec.get("failed_rule") or failure.get("rule"),
            "schema:error": scrub(rec.get("error"), self.secrets, self.key),
            "sg:failureException": failure.get("exception"),
            "sg:failureMessage": scrub(failure.get("message"), self.secrets, self.key),
            "sg:stoppedAt": Q(failed_ident) if failed_ident else None, "sg:cancelledBy": rec.get("cancelled_by"),
            "sg:runningJob": _strings(rec.get("running_jobs")),
            "sg:missingOutput": _strings(rec.get("missing_outputs")),
            "sg:inputChanged": _strings([c.get("path") or c.get("param") for c in changed]),
            "sg:reused": _strings([canonical_json(r) for r in reused]) if reused else None,
            "sg:interruptedDetectedAt": rec.get("interrupted_detected_at"),
            "sg:jobsPlanned": planned, "sg:jobsSucceeded": counts["succeeded"], "sg:jobsFailed": counts["failed"],
            # started and never finished: killed with the run (interrupted) or left unfinished
            "sg:jobsIncomplete": counts["incomplete"] + counts["interrupted"],
            "sg:jobsCancelled": counts["cancelled"] or None,
            "sg:rerunOf": Q(parent_ident) if rec.get("rerun_of") and parent_ident else None,
            "sg:forkOf": Q(parent_ident) if parent and parent_ident else None,
            "sg:forkChanges": canonical_json(rec["fork_changes"]) if rec.get("fork_changes") else None,
            **_recovery(rec, parent_ident),
            **jobfacts.run_attributes(rec),
        }
        log = failure.get("log")
        if isinstance(log, str) and log:
            attrs["sg:failureLog"] = Q(self.files.at(os.path.normpath(self.run_dir / log)))
        self.doc.activity(self.run_ident, start, end, attrs)
        for change in changed:  # the input as the jobs met it: another entity than the one the gate hashed
            path = change.get("path")
            if isinstance(path, str):
                full = path if os.path.isabs(path) else os.path.normpath(self.root / path)
                self.files.at(full, {"sg:changedAfterGate": True})

    def verdict(self) -> None:
        """run.json's `verdict` in W3C DQV: each check a `dqv:Metric` of its workflow (label, test, threshold or
        threshold param, what it measures, `skos:definition` = what failing means); each check of this run a
        `dqv:QualityMeasurement` generated by the run, of that metric, computed on the output file it read,
        with its value, the threshold it was held to and its verdict (an item of a `{param}` pointer another
        measurement, part of it); the run says the overall verdict (`sg:verdict`)."""
        verdict = self.record.get("verdict")
        if not isinstance(verdict, dict) or verdict.get("status") not in ("pass", "fail", "unknown"):
            return
        doc = self.doc
        doc.activity(self.run_ident, None, None, {"sg:verdict": verdict["status"],
                                                  "sg:verdictNote": verdict.get("reason")})
        homes = getattr(self, "step_workflows", {})  # a plan's checks are `<step>.<check>` of that step's workflow
        outputs = self.manifest.get("outputs") or {}
        for check in verdict.get("checks") or []:
            if not isinstance(check, dict) or not isinstance(check.get("name"), str):
                continue
            name = check["name"]
            step, dot, own = name.partition(".")
            home, own = (homes[step], own) if dot and step in homes else (self.plan, name)
            constant = check.get("threshold") if not check.get("threshold_param") else None
            metric = doc.entity(f"{home}/check/{local(own)}", {
                "prov:type": Q("dqv:Metric"), "prov:label": own, "skos:definition": check.get("says"),
                "sg:test": check.get("test"), "sg:threshold": constant, "sg:thresholdParam": check.get("threshold_param"),
                "sg:measure": check.get("measure"), "sg:adviceParam": _strings(check.get("params"))})
            decl = outputs.get(check.get("output")) or {}
            path = os.path.normpath(self.run_dir / decl["path"]) if isinstance(decl.get("path"), str) else None
            measured = check.get("value") is not None and path is not None and os.path.isfile(path)
            file = self.files.at(path, must_exist=True) if measured else None
            parts = [(f"{self.run_ident}/check/{local(name)}", check)]
            parts += [(f"{parts[0][0]}/{i}", item) for i, item in enumerate(check.get("values") or [], start=1)
                      if isinstance(item, dict)]
            for ident, part in parts:
                doc.entity(ident, {
                    "prov:type": Q("dqv:QualityMeasurement"), "prov:label": f"check {name}: {part.get('status')}",
                    "dqv:isMeasurementOf": Q(metric), "dqv:computedOn": Q(file) if file else None,
                    "dqv:value": part.get("value"), "sg:verdict": part.get("status"),
                    "sg:threshold": check.get("threshold"), "sg:measure": part.get("at") or check.get("measure"),
                    "sg:reason": self.scrub(part.get("reason"), self.secrets, self.key),
                    "dct:isPartOf": Q(parts[0][0]) if ident != parts[0][0] else None})
                doc.generated(ident, self.run_ident)

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
    """Build the run's PROV document and write prov.json (and, up to the eager limit, prov.provn and prov.ttl).
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


def _recovery(record: dict, parent_ident: str | None) -> dict:
    """A recovery fork's link to the failure it answers (run.json `recovery_of: {run, check}`), next to sg:forkOf:
    the same run, so the same IRI (`parent_ident`, its run_uuid)."""
    rec = record.get("recovery_of")
    if not isinstance(rec, dict) or not isinstance(rec.get("run"), str) or rec["run"] != record.get("parent_run") \
            or not parent_ident:
        return {}
    return {"sg:recoveryOf": Q(parent_ident),
            "sg:recoveredCheck": rec.get("check") if isinstance(rec.get("check"), str) else None}
