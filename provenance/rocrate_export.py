"""Export one run as a Workflow Run RO-Crate following the Provenance Run Crate profile (0.5).

The crate mirrors the registry layout (workflows/<id>/..., data/..., runs/<run_id>/...),
so the paths in the run's PROV record name the crate's files directly. It holds:

- the workflow folder; its Snakefile is the main entity (File, SoftwareSourceCode,
  ComputationalWorkflow, HowTo) in language Snakemake, with one tool
  (SoftwareApplication) and one HowToStep per rule of the manifest, and
  FormalParameters for every parameter of the contract and every declared output;
- the run: a CreateAction (instrument the workflow; object the input files and a
  PropertyValue per parameter, `x-sensitive` values hashed; result the outputs),
  one CreateAction per job (instrument the rule's tool), a ControlAction per job
  (instrument the step), and an OrganizeAction for Snakemake itself;
- the run folder's records (config.yaml, invocation.json, run.json, prov.*) and logs.

Jobs, their files and times are read from prov.json, so the crate is built from the
run's records alone. `x-sensitive` parameter values are hashed in the crate (the run's
own config.yaml, invocation.json, run.json and snakemake.log are copied with them hashed).
The core passes the manifest and schema in as dicts.

`validate()` runs roc-validator as a separate command, offline (rocval.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from snakegate.provenance import runstore
from snakegate.provenance import secrets as secretkeys
from snakegate.provenance.capture import run_secrets, scrub
from snakegate.provenance.compare import load_prov, plain, types_of
from snakegate.provenance.document import RENDERINGS, ensure_rendering, local
from snakegate.provenance.hashing import IGNORED_NAMES

PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/ro/wfrun/provenance/0.5": "Provenance Run Crate",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": "Workflow RO-Crate",
}
DEFAULT_LICENSE = "https://spdx.org/licenses/MIT"
_STATUS = {"succeeded": "http://schema.org/CompletedActionStatus", "failed": "http://schema.org/FailedActionStatus",
           "cancelled": "http://schema.org/FailedActionStatus", "running": "http://schema.org/ActiveActionStatus",
           "incomplete": "http://schema.org/FailedActionStatus"}
_TYPES = {"string": "Text", "integer": "Integer", "number": "Float", "boolean": "Boolean"}
_FORMATS = {".json": "application/json", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
            ".png": "image/png", ".yaml": "application/yaml", ".yml": "application/yaml", ".txt": "text/plain",
            ".log": "text/plain", ".ttl": "text/turtle", ".provn": "text/provenance-notation",
            ".py": "text/x-python", ".md": "text/markdown"}


class ExportError(Exception):
    """The crate cannot be written as asked; the message names the path or the record."""


def _fmt(path: str) -> str | None:
    return _FORMATS.get(os.path.splitext(path)[1].lower())


def _jobs_from_prov(prov: dict) -> list[dict]:
    """Job activities with their used/generated files (paths as recorded) from a PROV-JSON dict."""
    entities = prov.get("entity") or {}
    activities = prov.get("activity") or {}
    jobs = {}
    for ident, attrs in activities.items():
        rule = plain(attrs.get("sg:rule"))
        if rule:
            jobs[ident] = {"id": ident, "rule": rule, "status": plain(attrs.get("sg:status")),
                           "start": attrs.get("prov:startTime"), "end": attrs.get("prov:endTime"),
                           "error": plain(attrs.get("sg:error")), "wildcards": plain(attrs.get("sg:wildcards")),
                           "used": [], "generated": []}
    for rel in (prov.get("used") or {}).values():
        job = jobs.get(rel.get("prov:activity"))
        ent = entities.get(rel.get("prov:entity")) or {}
        if job is not None and plain(ent.get("sg:path")):
            job["used"].append(plain(ent["sg:path"]))
    for rel in (prov.get("wasGeneratedBy") or {}).values():
        job = jobs.get(rel.get("prov:activity"))
        ent = entities.get(rel.get("prov:entity")) or {}
        if job is not None and plain(ent.get("sg:path")):
            job["generated"].append((plain(ent["sg:path"]), rel.get("prov:role")))
    return list(jobs.values())


def _run_activity(prov: dict, run_id: str) -> dict:
    activities = prov.get("activity") or {}
    return activities.get(f"run:{local(run_id)}") or next(
        (a for a in activities.values() if "wfprov:WorkflowRun" in types_of(a) and plain(a.get("sg:status"))), {})


def _person(prov: dict) -> dict | None:
    for attrs in (prov.get("agent") or {}).values():
        if "prov:Person" in types_of(attrs) and plain(attrs.get("sg:identitySource")):
            return {"name": plain(attrs.get("prov:label")), "email": plain(attrs.get("schema:email"))}
    return None


def _engine_version(prov: dict) -> str | None:
    attrs = (prov.get("agent") or {}).get("agent:snakemake") or {}
    return plain(attrs.get("schema:softwareVersion"))


def build_crate(run_dir: Path, registry_root: Path, manifest: dict, schema: dict, workflow_folder: Path,
                scratch: Path, license: str = DEFAULT_LICENSE):
    """The rocrate.ROCrate of a run (files are copied when it is written; `scratch` holds redacted
    copies of the run's records and must exist until then)."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    run_dir, registry_root, workflow_folder = Path(run_dir), Path(registry_root), Path(workflow_folder)
    prov = load_prov(run_dir)
    for name in RENDERINGS:  # the crate carries all three PROV files; a big run deferred two of them
        ensure_rendering(run_dir, name)
    record = runstore.read_run(run_dir)
    invocation = (runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {})
    run_id = record.get("run_id") or run_dir.name
    wf_id = manifest.get("id") or workflow_folder.name
    run_rel = _rel(run_dir, registry_root)
    wf_rel = _rel(workflow_folder, registry_root)

    # the Workflow Run Crate profiles (0.5) are defined on RO-Crate 1.1 and its context's term IRIs
    crate = ROCrate(version="1.1")
    crate.name = f"{wf_id} run {run_id}"
    crate.description = (f"Workflow Run RO-Crate (Provenance Run Crate) of snakegate run {run_id} of workflow "
                         f"{wf_id} {manifest.get('version', '')}: {manifest.get('description', '')}").strip()
    crate.root_dataset["license"] = license
    for uri, name in PROFILES.items():
        profile = crate.add(ContextEntity(crate, uri, properties={"@type": "CreativeWork", "name": f"{name}",
                                                                  "version": uri.rsplit("/", 1)[-1]}))
        crate.root_dataset.append_to("conformsTo", profile)

    added: dict[str, object] = {}

    def add_file(source: Path, dest: str, props: dict | None = None):
        if dest in added:
            return added[dest]
        properties = {"name": Path(dest).name, **(props or {})}
        if _fmt(dest):
            properties.setdefault("encodingFormat", _fmt(dest))
        if source.is_file():
            properties.setdefault("contentSize", str(source.stat().st_size))
        entity = crate.add_file(source, dest_path=dest, properties=properties)
        added[dest] = entity
        return entity

    # the workflow ------------------------------------------------------------------------------------
    from rocrate.model.computationalworkflow import ComputationalWorkflow

    class WorkflowWithSteps(ComputationalWorkflow):
        # a workflow that links to its steps must also be a HowTo (Provenance Run Crate)
        TYPES = ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"]

    snakefile = workflow_folder / "Snakefile"
    workflow = crate.add_workflow(snakefile, dest_path=f"{wf_rel}/Snakefile", main=True, lang="snakemake",
                                  cls=WorkflowWithSteps,
                                  lang_version=_engine_version(prov), properties={
                                      "name": manifest.get("title") or wf_id, "version": manifest.get("version"),
                                      "description": manifest.get("description"),
                                      "identifier": wf_id})
    added[f"{wf_rel}/Snakefile"] = workflow
    for path in _folder_files(workflow_folder):
        rel = path.relative_to(workflow_folder).as_posix()
        if rel != "Snakefile" and not rel.startswith(("test/", "examples/")):
            add_file(path, f"{wf_rel}/{rel}")

    tools, steps = {}, {}
    for position, (rule, io) in enumerate(sorted((manifest.get("rules") or {}).items())):
        tool = crate.add(ContextEntity(crate, f"#tool-{rule}", properties={
            "@type": "SoftwareApplication", "name": f"rule {rule}",
            "description": f"Snakemake rule `{rule}` of workflow {wf_id}"}))
        for direction in ("input", "output"):
            for name, kind in ((io or {}).get(direction) or {}).items():
                fp = crate.add_formal_parameter(name=name, additionalType="File",
                                                identifier=f"#param-{rule}-{direction}-{name}",
                                                description=f"{direction} `{name}` of rule {rule} ({kind})")
                tool.append_to(direction, fp)
        step = crate.add(ContextEntity(crate, f"#step-{rule}", properties={
            "@type": "HowToStep", "name": rule, "position": str(position)}))
        step["workExample"] = tool
        workflow.append_to("hasPart", tool)
        workflow.append_to("step", step)
        tools[rule], steps[rule] = tool, step

    properties = (schema or {}).get("properties") or {}
    key, secrets = run_secrets(run_dir, registry_root, schema or {})
    params = invocation.get("params") or {}
    if key is not None:
        params = secretkeys.redact(schema or {}, params, key)[0]
    param_fps = {}
    for name, sub in properties.items():
        kind = "File" if sub.get("x-artifact") else _TYPES.get(sub.get("type"), "Text")
        fp = crate.add_formal_parameter(name=name, additionalType=kind, identifier=f"#param-{name}",
                                        description=sub.get("description"),
                                        valueRequired=name in ((schema or {}).get("required") or []))
        workflow.append_to("input", fp)
        param_fps[name] = fp
    output_fps = {}
    for name, out in (manifest.get("outputs") or {}).items():
        fp = crate.add_formal_parameter(name=name, additionalType="File", identifier=f"#output-{name}",
                                        description=out.get("description"))
        workflow.append_to("output", fp)
        output_fps[name] = fp

    # the run -----------------------------------------------------------------------------------------
    run_attrs = _run_activity(prov, run_id)
    status = record.get("status") or plain(run_attrs.get("sg:status")) or "unknown"
    person = _person(prov)
    agent = None
    if person and person.get("name"):
        agent = crate.add(ContextEntity(crate, f"#person-{_slug(person.get('email') or person['name'])}",
                                        properties={"@type": "Person", "name": person["name"],
                                                    **({"email": person["email"]} if person.get("email") else {})}))

    objects, results = [], []
    artifact_params = {name for name, sub in properties.items() if sub.get("x-artifact")}
    for name, value in params.items():
        if name in artifact_params and isinstance(value, str) and (registry_root / value).is_file():
            entity = add_file(registry_root / value, _rel(registry_root / value, registry_root))
            entity["exampleOfWork"] = param_fps[name]
            objects.append(entity)
        else:
            pv = crate.add(ContextEntity(crate, f"#pv-{name}", properties={
                "@type": "PropertyValue", "name": name,
                "value": value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)}))
            if name in param_fps:
                pv["exampleOfWork"] = param_fps[name]
            objects.append(pv)
    for name, out in (manifest.get("outputs") or {}).items():
        source = run_dir / out["path"]
        if source.is_file():
            entity = add_file(source, f"{run_rel}/{out['path']}", {"description": out.get("description")})
            entity["exampleOfWork"] = output_fps[name]
            results.append(entity)

    run_props = {"@type": "CreateAction", "name": f"run {run_id} of {wf_id}",
                 "actionStatus": {"@id": _STATUS.get(status, "http://schema.org/PotentialActionStatus")}}
    if run_attrs.get("prov:startTime"):
        run_props["startTime"] = run_attrs["prov:startTime"]
    if run_attrs.get("prov:endTime"):
        run_props["endTime"] = run_attrs["prov:endTime"]
    if record.get("error"):
        run_props["error"] = plain(run_attrs.get("sg:error")) or "the run failed"
    run_action = crate.add_action(workflow, identifier=f"#run-{run_id}", object=objects, result=results,
                                  properties=run_props)
    if agent is not None:
        run_action["agent"] = agent

    engine = crate.add(ContextEntity(crate, "#snakemake", properties={
        "@type": "SoftwareApplication", "name": "Snakemake", "url": "https://snakemake.readthedocs.io",
        "softwareVersion": _engine_version(prov) or "unknown"}))
    controls = []
    for job in _jobs_from_prov(prov):
        rule = job["rule"]
        suffix = _slug(job["id"].split("/job/", 1)[-1])
        inputs = [add_file(_resolve(registry_root, p), _crate_path(p, registry_root)) for p in job["used"]
                  if _resolve(registry_root, p).is_file()]
        outputs = [add_file(_resolve(registry_root, p), _crate_path(p, registry_root)) for p, _role in job["generated"]
                   if _resolve(registry_root, p).is_file()]
        tool = tools.get(rule)
        if tool is None:  # a rule the manifest does not list (no outputs): still a tool of the workflow
            tool = tools[rule] = crate.add(ContextEntity(crate, f"#tool-{rule}", properties={
                "@type": "SoftwareApplication", "name": f"rule {rule}"}))
            workflow.append_to("hasPart", tool)
            step = steps[rule] = crate.add(ContextEntity(crate, f"#step-{rule}", properties={
                "@type": "HowToStep", "name": rule, "position": str(len(steps))}))
            step["workExample"] = tool
            workflow.append_to("step", step)
        props = {"@type": "CreateAction", "name": f"job {job['id'].split('/job/', 1)[-1]}",
                 "actionStatus": {"@id": _STATUS.get(job["status"] or "", "http://schema.org/PotentialActionStatus")}}
        if job["start"]:
            props["startTime"] = job["start"]
        if job["end"]:
            props["endTime"] = job["end"]
        if job["error"]:
            props["error"] = job["error"]
        action = crate.add_action(tool, identifier=f"#job-{suffix}", object=inputs, result=outputs, properties=props)
        control = crate.add(ContextEntity(crate, f"#control-{suffix}", properties={
            "@type": "ControlAction", "name": f"orchestrate {rule}"}))
        control["instrument"] = steps[rule]
        control["object"] = action
        controls.append(control)
    organize = crate.add(ContextEntity(crate, f"#orchestrate-{run_id}", properties={
        "@type": "OrganizeAction", "name": f"Snakemake orchestrating run {run_id}"}))
    organize["instrument"] = engine
    organize["result"] = run_action
    if controls:
        organize["object"] = controls
    if run_props.get("startTime"):
        organize["startTime"] = run_props["startTime"]
    if run_props.get("endTime"):
        organize["endTime"] = run_props["endTime"]
    if agent is not None:
        organize["agent"] = agent

    # the run folder's records and logs --------------------------------------------------------------
    for name in (runstore.CONFIG_YAML, runstore.INVOCATION_JSON, runstore.RUN_JSON, runstore.SNAKEMAKE_LOG,
                 runstore.ORIGIN_JSON, "prov.json", "prov.provn", "prov.ttl"):
        source = run_dir / name
        if not source.is_file():
            continue
        if secrets and not name.startswith("prov."):
            # x-sensitive values never leave the machine: the crate gets copies with them hashed
            text = source.read_text(encoding="utf-8", errors="replace")
            source = Path(scratch) / name
            source.write_text(scrub(text, secrets, key), encoding="utf-8")
        entity = add_file(source, f"{run_rel}/{name}")
        if name.startswith("prov."):
            entity["about"] = run_action
    logs = run_dir / "logs"
    if logs.is_dir():
        for path in sorted(p for p in logs.rglob("*") if p.is_file()):
            add_file(path, f"{run_rel}/{path.relative_to(run_dir).as_posix()}")
    return crate


def export(run_dir: Path, registry_root: Path, dest: Path, manifest: dict, schema: dict, workflow_folder: Path,
           license: str = DEFAULT_LICENSE) -> Path:
    """Write the crate to folder `dest` or, when it ends in .zip, to that ZIP file. Returns `dest`."""
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
        crate = build_crate(run_dir, registry_root, manifest, schema, workflow_folder, Path(tmp), license)
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


def _crate_path(path: str, root: Path) -> str:
    return _rel(_resolve(root, path), root)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in str(text)).strip("-") or "x"


def validate(crate_path: Path, profile: str = "provenance-run-crate-0.5", severity: str = "required") -> list[str]:
    """Problems roc-validator finds at `severity` and above (an empty list means the crate passes).

    roc-validator runs as its own command, offline (rocval.py); ValidatorMissing when there is none."""
    from snakegate.provenance import rocval

    return [str(issue) for issue in rocval.validate(Path(crate_path), profile, severity)]
