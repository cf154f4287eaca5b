"""A plan's run as a Workflow Run RO-Crate (Provenance Run Crate 0.5): the plan is the main workflow and each
step's workflow a part of it.

Built like one workflow's crate (export.py: every file with its sha256, the run folder's records scrubbed of
sensitive values, the person as author and agent, every job a CreateAction with its ControlAction, Snakemake's
OrganizeAction, a fork's copied parent jobs), with what a plan adds:

- `plan.yaml`, written for the crate from invocation.json (the plan as gated: each step's workflow, version and
  params, an input from another step as `{from, output}`, a sensitive value as its keyed hash), is the main
  entity: File, SoftwareSourceCode, ComputationalWorkflow and HowTo in the language `snakegate plan`. Its
  parts are the steps' workflows (their run-folder copies, runs/<id>/steps/<step>/workflow/Snakefile: each a
  ComputationalWorkflow in Snakemake with FormalParameters for its params and declared outputs, whose parts are
  its rules' tools), and one HowToStep per plan step (workExample: the step's workflow);
- every edge (`bench.dataset ← clean.cleaned`) is a ParameterConnection from the upstream workflow's output
  FormalParameter to the consuming workflow's input FormalParameter, referenced by the consuming plan step
  (the workflow-run terms are given in the crate's context, so nothing is fetched to read them);
- the run is a CreateAction of the plan (objects: every gated input file and param value; results: every
  declared output), each step a CreateAction of its workflow (its inputs, those made by other steps included,
  and its outputs; its jobs' times) with a ControlAction whose instrument is its plan step, each job as in one
  workflow's crate.

The steps come in as plain data, in the plan's order ([(name, manifest, schema, folder)]) with the edges
([(step, param, source step, output)]); jobs, files and times come from prov.json. Writes only into `scratch`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from snakegate.provenance import runstore
from snakegate.provenance import secrets as secretkeys
from snakegate.provenance.document import local
from snakegate.provenance.hashing import sha256_file
from snakegate.provenance.rocrate import from_prov as rp
from snakegate.provenance.rocrate.export import _Crate, write_crate
from snakegate.provenance.rocrate.terms import (
    BIOSCHEMAS_WORKFLOW,
    DEFAULT_LICENSE,
    TYPES,
    folder_files,
    rel_path,
    slug,
    workflow_with_steps,
)

PLAN_FILE = "plan.yaml"
PLAN_LANGUAGE = "https://w3id.org/snakegate/plan/"  # the PROV record's `plan:` namespace
WFRUN = "https://w3id.org/ro/terms/workflow-run#"
WFRUN_TERMS = {term: WFRUN + term for term in ("ParameterConnection", "connection", "sourceParameter",
                                               "targetParameter")}
STEP_SEPARATOR = "__"


class _PlanCrate(_Crate):
    def __init__(self, run_dir: Path, registry_root: Path, steps: list[tuple], edges: list[tuple], scratch: Path,
                 license: str):
        self.plan_steps, self.edges = steps, edges
        record = runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON)
        self.plan_invocation = record.get("invocation") if isinstance(record.get("invocation"), dict) else {}
        self.plan_id = record.get("invocation_id") if isinstance(record.get("invocation_id"), str) else None
        label = self.plan_invocation.get("plan") if isinstance(self.plan_invocation.get("plan"), str) else None
        self.label = label
        described = ", ".join(f"{n} ({m.get('id') or n})" for n, m, _s, _f in steps)
        manifest = {"id": f"plan {label}" if label else "plan", "title": f"plan {label}" if label else "plan",
                    "description": f"a snakegate plan of {len(steps)} steps: {described}"}
        schema = {"type": "object", "properties": {n: sc or {"x-sensitive": True} for n, _m, sc, _f in steps}}
        super().__init__(run_dir, registry_root, manifest, schema, Path(run_dir), scratch, license)
        self.key, self.secrets = _plan_secrets(self.run_dir, self.root, self.schema)
        self.step_wfs: dict[str, object] = {}
        self.plan_howtos: dict[str, object] = {}
        self.step_rules: dict[str, list[str]] = {}
        self.param_fps: dict[tuple[str, str], object] = {}
        self.output_fps: dict[tuple[str, str], object] = {}
        self.step_io: dict[str, tuple[list, list]] = {}

    def step_invocation(self, name: str) -> dict:
        steps = self.plan_invocation.get("steps") if isinstance(self.plan_invocation.get("steps"), dict) else {}
        return steps.get(name) if isinstance(steps.get(name), dict) else {}

    # the plan and its steps' workflows ------------------------------------------------------------------
    def workflow(self):
        from rocrate.model.computerlanguage import ComputerLanguage

        from snakegate import __version__

        self.crate.metadata.extra_terms.update(WFRUN_TERMS)
        lang = self.crate.add(ComputerLanguage(self.crate, PLAN_LANGUAGE, properties={
            "name": "snakegate plan", "alternateName": "snakegate", "identifier": {"@id": PLAN_LANGUAGE},
            "url": {"@id": PLAN_LANGUAGE}, "version": __version__}))
        path = self.scratch / PLAN_FILE
        path.write_text(self.plan_text(), encoding="utf-8")
        # a plan has no version of its own: the invocation id is what pins it
        properties = {"name": self.manifest["title"], "description": self.manifest["description"],
                      "identifier": self.plan_id, "version": self.plan_id,
                      "encodingFormat": "application/yaml", "sha256": sha256_file(path),
                      "url": f"{PLAN_LANGUAGE}{local(self.plan_id)}" if self.plan_id else None,
                      "conformsTo": {"@id": BIOSCHEMAS_WORKFLOW}}
        self.main = self.crate.add_workflow(path, dest_path=PLAN_FILE, main=True, lang=lang, cls=workflow_with_steps(),
                                            properties={k: v for k, v in properties.items() if v})
        self.files[PLAN_FILE] = self.main
        for position, (name, manifest, schema, folder) in enumerate(self.plan_steps):
            self.step_workflow(name, manifest, schema or {}, Path(folder))
            howto = self.add(f"#plan-step-{slug(name)}", {"@type": "HowToStep", "name": f"step {name}",
                                                            "position": str(position)})
            howto["workExample"] = self.step_wfs[name]
            self.plan_howtos[name] = howto

    def plan_text(self) -> str:
        """The plan as gated (invocation.json), in the plan's order, as a plan config reads."""
        from ruamel.yaml import YAML

        steps = {}
        for name, _m, _s, _f in self.plan_steps:
            inv = self.step_invocation(name)
            steps[name] = {"workflow": inv.get("workflow"), "version": inv.get("version"),
                           "params": self.redacted(name, inv.get("params") or {})}
        data = {**({"plan": self.label} if self.label else {}), "invocation_id": self.plan_id, "steps": steps}
        out = io.StringIO()
        out.write(f"# The plan of snakegate run {self.run_id} as it was gated ({runstore.INVOCATION_JSON}); "
                  "sensitive values are keyed hashes.\n")
        yaml = YAML(typ="safe", pure=True)
        yaml.default_flow_style, yaml.sort_base_mapping_type_on_output, yaml.width = False, False, 4096
        yaml.dump(json.loads(json.dumps(data)), out)
        return out.getvalue()

    def redacted(self, name: str, params: dict) -> dict:
        schema = self.schema["properties"].get(name) or {}
        return secretkeys.redact(schema, params, self.key)[0] if self.key is not None else params

    def step_workflow(self, name: str, manifest: dict, schema: dict, folder: Path) -> None:
        """A step's workflow copy: its Snakefile a ComputationalWorkflow, its other files, its rules' tools and
        FormalParameters for its params and declared outputs."""
        wf_id = manifest.get("id") or name
        inv = self.step_invocation(name)
        rel = rel_path(folder, self.root)
        snakefile = folder / "Snakefile"
        base = f"{(self.prov.get('prefix') or {}).get('wf', '#')}{local(wf_id)}/{inv.get('workflow_hash') or ''}"
        properties = {"name": manifest.get("title") or wf_id, "version": manifest.get("version"),
                      "description": manifest.get("description"), "identifier": wf_id,
                      "encodingFormat": "text/x-snakemake", "sha256": sha256_file(snakefile) if snakefile.is_file()
                      else None, "url": base, "conformsTo": {"@id": BIOSCHEMAS_WORKFLOW}}
        wf = self.crate.add_workflow(snakefile, dest_path=f"{rel}/Snakefile", main=False, lang="snakemake",
                                     cls=workflow_with_steps(), lang_version=rp.engine_version(self.prov),
                                     properties={k: v for k, v in properties.items() if v})
        self.files[f"{rel}/Snakefile"] = wf
        self.step_wfs[name] = wf
        for path in folder_files(folder):
            sub = path.relative_to(folder).as_posix()
            if sub != "Snakefile" and not sub.startswith(("test/", "examples/")):
                self.file(path, f"{rel}/{sub}")
        self.step_rules[name] = []
        for rule, rule_io in (manifest.get("rules") or {}).items():
            ident = f"{base}/rule/{local(rule)}"
            key = f"{name}{STEP_SEPARATOR}{rule}"
            taken = any(t.id == ident for t in self.tools.values())  # the same workflow in an earlier step
            self.tool(key, rule_io or {}, ident=f"#tool-{slug(key)}" if taken else ident, own=rule, owner=wf_id,
                      version=manifest.get("version"))
            self.step_rules[name].append(key)
        properties_of = (schema.get("properties") or {})
        for pname, sub in properties_of.items():
            kind = "File" if sub.get("x-artifact") else TYPES.get(sub.get("type"), "Text")
            self.param_fps[(name, pname)] = self.crate.add_formal_parameter(
                name=pname, additionalType=kind, identifier=f"#param-{slug(name)}-{slug(pname)}",
                description=sub.get("description"), valueRequired=pname in (schema.get("required") or []))
        for oname, out in (manifest.get("outputs") or {}).items():
            self.output_fps[(name, oname)] = self.crate.add_formal_parameter(
                name=oname, additionalType="File", identifier=f"#output-{slug(name)}-{slug(oname)}",
                description=out.get("description"))
        wf["input"] = [fp for (step, _), fp in self.param_fps.items() if step == name]
        wf["output"] = [fp for (step, _), fp in self.output_fps.items() if step == name]

    # params, inputs, outputs, edges ------------------------------------------------------------------
    def parameters(self) -> tuple[list, list]:
        """(objects, results) of the plan's run action; each step's own in `step_io`."""
        outputs = {o.get("name"): o for o in self.record.get("outputs") or [] if isinstance(o, dict)}
        fed = {(step, param.split(".")[0].split("[")[0]) for step, param, _src, _out in self.edges}
        all_objects, all_results = [], []
        for name, manifest, schema, _folder in self.plan_steps:
            props = (schema or {}).get("properties") or {}
            objects, results = [], []
            for pname, value in self.redacted(name, self.step_invocation(name).get("params") or {}).items():
                entity = None
                if _is_ref(value):  # an input another step made in this run
                    made = outputs.get(f"{value['from']}.{value['output']}") or {}
                    source = self.run_dir / str(made.get("path") or "").split(f"{self.run_id}/", 1)[-1]
                    if made.get("path") and source.is_file():
                        entity = self.file(source, rel_path(source, self.root))
                elif (props.get(pname) or {}).get("x-artifact") and isinstance(value, str) \
                        and (self.root / value).is_file():
                    entity = self.file(self.root / value, rel_path(self.root / value, self.root))
                if entity is None:
                    entity = self.add(f"#pv-{slug(name)}-{slug(pname)}", {
                        "@type": "PropertyValue", "name": f"{name}.{pname}",
                        "value": value if isinstance(value, (str, int, float, bool))
                        else json.dumps(value, sort_keys=True)})
                self.example_of(entity, self.param_fps.get((name, pname)))
                objects.append(entity)
                if (name, pname) not in fed:
                    all_objects.append(entity)
            for oname, out in (manifest.get("outputs") or {}).items():
                made = outputs.get(f"{name}.{oname}") or {}
                source = self.run_dir / str(made.get("path") or "").split(f"{self.run_id}/", 1)[-1]
                if made.get("path") and source.is_file():
                    entity = self.file(source, rel_path(source, self.root), {"description": out.get("description")})
                    self.example_of(entity, self.output_fps[(name, oname)])
                    results.append(entity)
            self.step_io[name] = (objects, results)
            all_results += results
        self.main["input"] = [fp for key, fp in self.param_fps.items() if key not in fed]
        self.main["output"] = list(self.output_fps.values())
        return all_objects, all_results

    def connections(self) -> None:
        """Each edge a ParameterConnection, referenced by the plan step that takes the output (CWL's convention)."""
        for step, param, source, output in self.edges:
            top = param.split(".")[0].split("[")[0]
            target, made = self.param_fps.get((step, top)), self.output_fps.get((source, output))
            if target is None or made is None or step not in self.plan_howtos:
                continue
            conn = self.add(f"#connection-{slug(step)}-{slug(param)}", {
                "@type": "ParameterConnection", "name": f"{step}.{param} ← {source}.{output}"})
            conn["sourceParameter"], conn["targetParameter"] = made, target
            howto = self.plan_howtos[step]
            howto["connection"] = [*_as_list(howto.get("connection")), conn]

    # actions -----------------------------------------------------------------------------------------
    def step_action(self, name: str, jobs: list, copied: list):
        """The step's run (CreateAction of its workflow, its jobs' times; a fork's step that ran no job: the
        times of the parent's jobs whose outputs it copied) and its ControlAction (its plan step)."""
        mine = [j for j in jobs if _step_of(j.rule) == name]
        objects, results = self.step_io.get(name, ([], []))
        timed = mine or [j for j in copied if _step_of(j.rule) == name]
        starts = sorted(t for t in (rp.crate_time(j.start) for j in timed) if t)
        ends = sorted(t for t in (rp.crate_time(j.end) for j in timed) if t)
        declared = [o for o in self.record.get("outputs") or [] if isinstance(o, dict) and o.get("step") == name]
        stopped = [j for j in mine if j.status in ("failed", "cancelled", "running")]
        status = "succeeded" if not stopped and all(o.get("exists") for o in declared) and \
            (mine or self.record.get("parent_run")) else "failed"
        error = None
        if status == "failed" and stopped:
            error = "; ".join(f"job {j.suffix} {j.status}" + (f": {j.error}" if j.error else "") for j in stopped)
        elif status == "failed":
            error = "not every declared output was made" if mine else "no job of this step ran in this run"
        inv = self.step_invocation(name)
        action = self.action(self.step_wfs[name], f"#step-run-{slug(self.run_id)}-{slug(name)}",
                             f"step {name} of run {self.run_id}",
                             f"step {name} ({inv.get('workflow')} {inv.get('version') or ''}) of snakegate run "
                             f"{self.run_id}: {status}", status, starts[0] if starts else None,
                             ends[-1] if ends else None, error, objects, results)
        control = self.add(f"#control-step-{slug(name)}", {
            "@type": "ControlAction", "name": f"orchestrate step {name}",
            "description": f"Snakemake running the jobs of step {name}"})
        control["instrument"] = self.plan_howtos[name]
        control["object"] = action
        if self.person is not None:
            control["agent"] = self.person
        return control

    def parent_jobs(self, ran: set[str]) -> list:
        """A fork: the parent's jobs whose outputs it copied instead of running them again (the rules of a step
        that runs the same workflow as in the parent)."""
        parent = self.record.get("parent_run")
        if not isinstance(parent, str) or not runstore.is_safe_run_id(parent):
            return []
        from snakegate.provenance.compare import load_prov

        try:
            parent_prov = load_prov(self.run_dir.parent / parent)
        except Exception:  # noqa: BLE001 - a parent without a readable record: the fork stands alone
            return []
        before = runstore.read_json(self.run_dir.parent / parent / runstore.INVOCATION_JSON).get("invocation")
        before = before.get("steps") if isinstance(before, dict) and isinstance(before.get("steps"), dict) else {}
        same = {n for n, _m, _s, _f in self.plan_steps
                if (before.get(n) or {}).get("workflow_hash") == self.step_invocation(n).get("workflow_hash")}
        return [job for job in rp.jobs(parent_prov) if job.rule not in ran and job.rule in self.tools
                and _step_of(job.rule) in same]

    def run(self, license: str):
        self.describe_root(license)
        self.workflow()
        objects, results = self.parameters()
        self.connections()
        jobs = rp.jobs(self.prov)
        run_action = self.run_action(objects, self.partial_results(jobs, results),
                                     f"snakegate run {self.run_id} of {self.wf_id}: {self.status}")
        controls = [self.job_action(job, self.run_attrs.get("prov:endTime")) for job in jobs]
        copied = self.parent_jobs({j.rule for j in jobs})
        controls += [self.job_action(job, None, self.record.get("parent_run")) for job in copied]
        step_controls = [self.step_action(name, jobs, copied) for name, _m, _s, _f in self.plan_steps]
        for name, wf in self.step_wfs.items():
            wf["hasPart"] = self.ran(self.step_rules[name])
            wf["step"] = [self.steps[r] for r in self.step_rules[name]]
        self.main["hasPart"] = list(self.step_wfs.values())
        self.main["step"] = list(self.plan_howtos.values())
        return self.finish(run_action, [*step_controls, *controls])

    def describe_root(self, license: str) -> None:
        super().describe_root(license)
        self.crate.description = (f"Workflow Run RO-Crate (Provenance Run Crate) of snakegate run {self.run_id} of "
                                  f"{self.manifest['description']}")

    def records(self, run_action) -> None:
        super().records(run_action)
        for name, _m, _s, _f in self.plan_steps:  # each step's logs
            logs = self.run_dir / "steps" / name / "logs"
            if logs.is_dir():
                for path in sorted(p for p in logs.rglob("*") if p.is_file()):
                    self.file(path, f"{self.run_rel}/{path.relative_to(self.run_dir).as_posix()}")

    def readme_lines(self) -> list[str]:
        steps = [f"  - `{n}`: `{m.get('id')}` {m.get('version', '')}, in `{self.run_rel}/steps/{n}/`"
                 for n, m, _s, _f in self.plan_steps]
        edges = [f"  - `{step}.{param}` ← `{source}.{output}`" for step, param, source, output in self.edges]
        return [
            f"# {self.manifest['title']}: run {self.run_id}",
            "",
            f"The record of one run of a snakegate plan of {len(self.plan_steps)} steps: {self.status}, from "
            f"{rp.crate_time(self.run_attrs.get('prov:startTime')) or '?'} to "
            f"{rp.crate_time(self.run_attrs.get('prov:endTime')) or '?'}. The steps ran as one Snakemake workflow.",
            "",
            "- `ro-crate-metadata.json` describes it as a Workflow Run RO-Crate (Provenance Run Crate 0.5): the plan",
            "  and its steps' workflows, the run, each step's run, each job with the files it used and made, and",
            "  their sha256.",
            f"- `{PLAN_FILE}` is the plan as it was gated (the main workflow); its steps:",
            *steps,
            "- the steps take from each other:" if edges else "- no step takes an output of another.",
            *edges,
            f"- `{self.run_rel}/` is the run folder: each step's workflow copy, outputs and logs under `steps/`,",
            "  `config.yaml`, `invocation.json`, `run.json` and the run's W3C PROV record (`prov.json`, `prov.provn`,",
            "  `prov.ttl`).",
        ]


def _is_ref(value) -> bool:
    return isinstance(value, dict) and set(value) == {"from", "output"} and all(isinstance(v, str)
                                                                               for v in value.values())


def _step_of(rule: str) -> str | None:
    return rule.split(STEP_SEPARATOR, 1)[0] if STEP_SEPARATOR in rule else None


def _as_list(value) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def _plan_secrets(run_dir: Path, root: Path, schema: dict) -> tuple[bytes | None, list[str]]:
    """The registry key and the text of every step's sensitive values (config.yaml holds them in plain text,
    under `steps.<step>.params`), to scrub from the crate's copies of the run's records."""
    try:
        from ruamel.yaml import YAML
        data = YAML(typ="safe", pure=True).load(runstore.read_record(Path(run_dir) / runstore.CONFIG_YAML)
                                                 .decode("utf-8"))
    except Exception:  # noqa: BLE001 - unreadable: invocation.json's keyed hashes are all there is
        data = {}
    steps = data.get("steps") if isinstance(data, dict) and isinstance(data.get("steps"), dict) else {}
    params = {n: s.get("params") for n, s in steps.items() if isinstance(s, dict) and isinstance(s.get("params"), dict)}
    values = list(secretkeys.sensitive_values(schema, params).values())
    if not values:
        return None, []
    return secretkeys.registry_key(root), secretkeys.secret_strings(values)


def build_plan_crate(run_dir: Path, registry_root: Path, steps: list[tuple], edges: list[tuple], scratch: Path,
                     license: str = DEFAULT_LICENSE):
    """The rocrate.ROCrate of a plan's run (see build_crate)."""
    return _PlanCrate(run_dir, registry_root, steps, edges, scratch, license).run(license)


def export_plan(run_dir: Path, registry_root: Path, dest: Path, steps: list[tuple], edges: list[tuple],
                license: str = DEFAULT_LICENSE) -> Path:
    """Write a plan run's crate to folder `dest` or, when it ends in .zip, to that ZIP file. Returns `dest`.
    `steps`: [(name, manifest, schema, workflow folder)] in the plan's order; `edges`: [(step, param, source
    step, output)]."""
    return write_crate(lambda scratch: build_plan_crate(run_dir, registry_root, steps, edges, scratch, license), dest)

