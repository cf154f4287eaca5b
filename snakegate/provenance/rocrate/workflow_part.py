"""The workflow part of a run's crate (a mixin of export._Crate): the root dataset's name, license, profiles
and author; the Snakefile as the main ComputationalWorkflow with the workflow folder's files; one tool
(SoftwareApplication) and HowToStep per rule with FormalParameters for its IO; the run's parameters
(FormalParameters with a PropertyValue or File as example) and results; the actions of rules no job of which
started in a stopped run.

Reads the workflow folder and the run's invocation.json; writes nothing (entities go into the crate).
"""

from __future__ import annotations

import json

from snakegate.provenance import runstore
from snakegate.provenance import secrets as secretkeys
from snakegate.provenance.document import local
from snakegate.provenance.hashing import sha256_file
from snakegate.provenance.rocrate import from_prov as rp
from snakegate.provenance.rocrate.terms import (
    BIOSCHEMAS_WORKFLOW,
    PROFILES,
    folder_files,
    rel_path,
    resolve,
    slug,
    value_type,
    workflow_with_steps,
)


class WorkflowPart:
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
            self.person = self.add(f"#person-{slug(who.get('email') or who['name'])}", {
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
        for path in folder_files(self.wf_folder):
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
        ident = ident or (f"{base}rule/{local(rule)}" if base else f"#tool-{slug(rule)}")
        own, owner = own or rule, owner or self.wf_id
        tool = self.add(ident, {"@type": "SoftwareApplication", "name": f"rule {own}", "url": ident,
                                "softwareVersion": version or self.manifest.get("version") or "unknown",
                                "description": f"Snakemake rule `{own}` of workflow {owner}"})
        for direction in ("input", "output"):
            fps = []
            for name, kind in ((io or {}).get(direction) or {}).items():
                fp = self.crate.add_formal_parameter(name=name, additionalType="File",
                                                     identifier=f"#param-{slug(rule)}-{direction}-{slug(name)}",
                                                     description=f"{direction} `{name}` of rule {own} ({kind})")
                self.rule_fps[(rule, direction, name)] = fp
                fps.append(fp)
            if fps:
                tool[direction] = fps
        position = sum(1 for r in self.steps if self.owners.get(r) == owner)
        step = self.add(f"#step-{slug(rule)}", {"@type": "HowToStep", "name": own, "position": str(position)})
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
        ident = f"#not-started-{slug(rule)}"
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
                source = resolve(self.root, path)
                if source.is_file():
                    entity = self.file(source, rel_path(source, self.root))
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
                name=name, additionalType=kind, identifier=f"#param-{slug(name)}", description=sub.get("description"),
                valueRequired=name in (self.schema.get("required") or []))
        for name, out in (self.manifest.get("outputs") or {}).items():
            output_fps[name] = self.crate.add_formal_parameter(name=name, additionalType="File",
                                                               identifier=f"#output-{slug(name)}",
                                                               description=out.get("description"))
        self.main["input"] = list(param_fps.values())
        self.main["output"] = list(output_fps.values())
        objects, results = [], []
        for name, value in params.items():
            if (properties.get(name) or {}).get("x-artifact") and isinstance(value, str) \
                    and (self.root / value).is_file():
                entity = self.file(self.root / value, rel_path(self.root / value, self.root))
            else:
                entity = self.add(f"#pv-{slug(name)}", {
                    "@type": "PropertyValue", "name": name,
                    "value": value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)})
            self.example_of(entity, param_fps.get(name))
            objects.append(entity)
        for name in properties:
            if name not in params:  # an optional param the run left unset: said so, and no value invented
                self.example_of(self.add(f"#pv-{slug(name)}", {
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
