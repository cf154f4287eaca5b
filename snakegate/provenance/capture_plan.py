"""A plan run's W3C PROV record: one run, a sub-activity per step, the data flow between steps as plain
`prov:used` / `prov:wasGeneratedBy`, and the plan itself as the plan entity.

Built like a single workflow's record (capture.py: agents, the gate, the staging, the jobs, the
environment, how the run ended) with what a plan adds:

- the plan: a `prov:Plan` entity (`plan:<invocation id>`, `wfdesc:Workflow`) whose sub-processes are
  the steps' workflows, each a `prov:Plan` / `wfdesc:Workflow` with its id, version and content hash,
  whose rules are `wfdesc:Process` (`wf:<workflow>/<hash>/rule/<rule>`);
- each step: an activity `run:<run>/step/<step>` (`sg:PlanStep`, part of the run) with the step's own
  invocation id, its workflow, version and content hash, associated with Snakemake under the step's
  workflow as plan; each job is part of its step's activity (rules are `wf_<step>__<rule>`);
- the plan's invocation entity (`inv:<id>`) and one per step, each derived from the plan's.

Reads the run folder; writes prov.json (and the renderings) only through Document.write.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

from snakegate.provenance import runstore, secrets
from snakegate.provenance.capture import _Builder, _log_text
from snakegate.provenance.document import Many, Q, local
from snakegate.provenance.hashing import canonical_json, sha256_text, workflow_hash

STEP_SEPARATOR = "__"


class _PlanBuilder(_Builder):
    def __init__(self, run_dir: Path, registry_root: Path, workdir: Path, steps: list[tuple], status: str,
                 rule_prefix: str, record_hostname: bool):
        # one manifest for the document's roles and declared outputs: rules and outputs named by step
        manifest = {"id": "plan", "title": "plan", "rules": {}, "outputs": {}}
        schema = {"type": "object", "properties": {}}
        for name, step_manifest, step_schema, _folder in steps:
            for rule, io in (step_manifest.get("rules") or {}).items():
                manifest["rules"][f"{name}{STEP_SEPARATOR}{rule}"] = io
            for out, decl in (step_manifest.get("outputs") or {}).items():
                manifest["outputs"][f"{name}.{out}"] = {**decl, "path": f"steps/{name}/{decl['path']}"}
            schema["properties"][name] = step_schema
        super().__init__(run_dir, registry_root, workdir, manifest, schema, Path(run_dir), status, rule_prefix,
                         record_hostname)
        self.plan_steps = steps
        config = runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation") or {}
        self.plan_invocation = config
        self.step_params = {n: (inv.get("params") or {}) for n, inv in (config.get("steps") or {}).items()}
        self.key, self.secrets = self._plan_secrets()
        self.params = secrets.redact(self.schema, self.step_params, self.key)[0] if self.key else self.step_params
        self.step_workflows: dict[str, str] = {}
        self.rule_steps: dict[str, str] = {}

    def _plan_secrets(self):
        """The registry key and every step's x-sensitive values (config.yaml holds them in plain text)."""
        from ruamel.yaml import YAML

        try:
            data = YAML(typ="safe", pure=True).load((self.run_dir / runstore.CONFIG_YAML).read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - unreadable: only the invocation's keyed hashes remain
            data = {}
        steps = (data or {}).get("steps") if isinstance(data, dict) else None
        params = {n: (s or {}).get("params") or {} for n, s in (steps or {}).items()}
        values = list(secrets.sensitive_values(self.schema, params).values())
        if not values:
            return None, []
        return secrets.registry_key(self.root), secrets.secret_strings(values)

    # the plan and its steps' workflows -----------------------------------------------------------
    def workflow(self) -> str:
        inv_id = self.invocation.get("invocation_id") or "unknown"
        plan_ident = f"plan:{local(inv_id)}"
        label = self.plan_invocation.get("plan")
        self.doc.namespaces["plan"] = "https://w3id.org/snakegate/plan/"
        self.doc.entity(plan_ident, {
            "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Workflow"), Q("sg:Plan"))),
            "prov:label": f"plan {label}" if label else "plan", "sg:planLabel": label,
            "sg:invocationId": inv_id})
        for name, manifest, _schema, folder in self.plan_steps:
            wf_id = manifest.get("id") or name
            content_hash = workflow_hash(folder)
            ident = f"wf:{local(wf_id)}/{content_hash}"
            _, shown = self.files.shown(str(folder))
            # the registry commit and the step's git tree, as for one workflow: the step copy's source.json
            # (snapshot.py); a run made before it: its copy's source folder while that still holds what ran
            source = self.root / "workflows" / str(wf_id)
            facts, snapshot_id = self.pinned_snapshot(
                Path(folder).parent, content_hash,
                source if source.is_dir() and workflow_hash(source) == content_hash else None)
            self.doc.entity(ident, {
                "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Workflow"), Q("schema:SoftwareSourceCode"))),
                "prov:label": manifest.get("title") or wf_id, "schema:name": manifest.get("title") or wf_id,
                "schema:version": manifest.get("version"), "dct:identifier": wf_id, "sg:workflowId": wf_id,
                "sg:contentHash": content_hash, "prov:location": shown, "sg:gitTree": facts.get("tree"),
                "sg:gitTreeDirty": facts.get("tree_dirty"), "dct:isPartOf": Q(snapshot_id)})
            self.doc.add_values(plan_ident, "wfdesc:hasSubProcess", Q(ident))
            self.step_workflows[name] = ident
            for rule in manifest.get("rules") or {}:
                self.rule_steps[f"{name}{STEP_SEPARATOR}{rule}"] = name
                self.step(f"{name}{STEP_SEPARATOR}{rule}")
        self.plan = plan_ident
        return plan_ident

    def step(self, rule: str) -> str:
        """A rule of a step (`<step>__<rule>`) as a process of that step's workflow."""
        found = self.steps.get(rule)
        if found is not None:
            return found
        name, _, own = rule.partition(STEP_SEPARATOR)
        parent = self.step_workflows.get(name, self.plan)
        found = self.steps[rule] = self.doc.entity(f"{parent}/rule/{local(own or rule)}", {
            "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Process"))), "prov:label": f"rule {own or rule} of step "
                                                                                      f"{name}", "sg:rule": own or rule,
            "sg:step": name})
        self.doc.add_values(parent, "wfdesc:hasSubProcess", Q(found))
        return found

    # the invocations -----------------------------------------------------------------------------
    def invocation_entity(self) -> str:
        inv_id = self.invocation.get("invocation_id") or "unknown"
        ident = f"inv:{local(inv_id)}"
        self.doc.entity(ident, {"prov:type": Q("sg:Invocation"), "prov:label": f"plan invocation {inv_id[:12]}",
                                "sg:invocationId": inv_id, "sg:kind": "plan",
                                "sg:planLabel": self.plan_invocation.get("plan")})
        for name, inv in sorted((self.plan_invocation.get("steps") or {}).items()):
            step_id = sha256_text(canonical_json(inv))
            params = secrets.redact(self.schema["properties"].get(name) or {}, inv.get("params") or {},
                                    self.key)[0] if self.key else (inv.get("params") or {})
            sub = self.doc.entity(f"inv:{local(step_id)}", {
                "prov:type": Q("sg:Invocation"), "prov:label": f"step {name}: invocation {step_id[:12]}",
                "sg:invocationId": step_id, "sg:step": name, "sg:workflow": inv.get("workflow"),
                "sg:version": inv.get("version"), "sg:workflowHash": inv.get("workflow_hash"),
                "sg:params": canonical_json(params), "sg:inputHashes": canonical_json(inv.get("inputs") or {})})
            self.doc.derived(sub, ident)  # each step's invocation is a part of the plan's
        return ident

    def gate(self, inv_ident: str) -> str:
        ident = super().gate(inv_ident)
        # the step gates hashed the inputs: each step's input keys are `params...` of its own invocation
        for name, inv in sorted((self.plan_invocation.get("steps") or {}).items()):
            for where, digest in sorted((inv.get("inputs") or {}).items()):
                path = self._param_value(inv.get("params") or {}, where)
                if isinstance(path, str) and digest:
                    full = path if os.path.isabs(path) else os.path.normpath(self.root / path)
                    ent = self.files.at(full)
                    if self.files.by_path[full].sha256 != digest:
                        ent = self.files.at(full, digest=(None, digest))
                    self.doc.used(ident, ent, role="sg:gatedInput")
        return ident

    # the run and its steps -----------------------------------------------------------------------
    def run_activity(self, jobs: list, failed_ident: str | None, planned: int | None) -> None:
        super().run_activity(jobs, failed_ident, planned)
        start = runstore.parse_time(self.record.get("started"))
        step_ids = {}
        for name, inv in (self.plan_invocation.get("steps") or {}).items():
            ident = self.doc.activity(f"{self.run_ident}/step/{local(name)}", start, None, {
                "prov:type": Many((Q("sg:PlanStep"), Q("wfprov:WorkflowRun"))), "prov:label": f"step {name}",
                "sg:step": name, "sg:workflow": inv.get("workflow"), "sg:version": inv.get("version"),
                "sg:workflowHash": inv.get("workflow_hash"), "sg:invocationId": sha256_text(canonical_json(inv)),
                "wfprov:wasPartOfWorkflowRun": Q(self.run_ident)})
            self.doc.associated(ident, self.agent_ids["snakemake"], plan=self.step_workflows.get(name),
                                role="sg:workflowEngine")
            self.doc.started(ident, None, self.run_ident, start)
            step_ids[name] = ident
        # each job is part of its step's run, which is part of the plan's
        for attrs in (e[3] for e in self.doc.elements.values() if e[0] == "activity"):
            rule = attrs.get("sg:rule")
            name = self.rule_steps.get(rule) if isinstance(rule, str) else None
            if name in step_ids and attrs.get("wfprov:wasPartOfWorkflowRun") == Q(self.run_ident) and \
                    attrs.get("sg:step") is None:
                attrs["wfprov:wasPartOfWorkflowRun"] = Q(step_ids[name])
                attrs["sg:step"] = name

    def _config_params(self) -> dict:
        return {}


def build(run_dir: Path, registry_root: Path, workdir: Path, steps: list[tuple], snakemake_log: str | None,
          status: str, rule_prefix: str, *, record_hostname: bool = True):
    builder = _PlanBuilder(run_dir, registry_root, workdir, steps, status, rule_prefix, record_hostname)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return builder.build(_log_text(run_dir, snakemake_log))
    finally:
        if was_enabled:
            gc.enable()


def capture(run_dir: Path, registry_root: Path, workdir: Path, steps: list[tuple], snakemake_log: str | None,
            status: str, rule_prefix: str, *, record_hostname: bool = True) -> list[Path]:
    """Build a plan run's PROV document and write it. `steps`: [(name, manifest, schema, workflow folder)]."""
    doc = build(run_dir, registry_root, workdir, steps, snakemake_log, status, rule_prefix,
                record_hostname=record_hostname)
    return doc.write(Path(run_dir))
