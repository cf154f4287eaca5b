"""The jobs of a run as PROV: one wfprov:ProcessRun per job, its files and its plan step.

Each job is an activity `run:<id>/job/<rule>[/<wildcard values>]` that
`wfprov:wasPartOfWorkflowRun` the run, was started by the run (`wasStartedBy`
with the run as starter, at the job's start), is associated with Snakemake
(the engine) whose plan is the rule's step (`plan:rule/<rule>`, a
wfdesc:Process), used its input files and generated its outputs and log with
roles that are IRIs (`plan:rule/<rule>/input/<name>`, `.../output/<name>`,
`sg:jobLog`), and each output `wasDerivedFrom` each input. A failed job
carries its error (`schema:error`); every job says whether it succeeded (`schema:actionStatus`) and
its finer status (`sg:status`): a job a cancel stopped is "cancelled", one killed with the run "interrupted"
(stopped_status). A job is `wfprov:describedByProcess` its step, and associated with each external tool its
shell command runs (workflow.yaml `tools:`, role `sg:externalTool`). Its params are JSON values.

IO names (roles) are the names the job gave its files, as the guard saw them
(runs/<id>/jobio/, jobfacts.py); for a job without that record they come from
the manifest's rule IO: the rule's only name, else the declared output at that
path, the producer's output name, the `x-artifact` param, a unique type match,
or a file-name match.

Per-job facts a later source knows (a scheduler's job id and node, job-side
times) arrive in `Job.facts` (attribute name -> value, names from the
vocabulary) and are added to the job's activity as they are.

This loop runs once per job of runs with thousands of jobs, so it appends
records to the document directly and caches what repeats. Reads nothing.
"""

from __future__ import annotations

import ast
import json
import re
from json.encoder import encode_basestring as _json_str
from pathlib import Path

from snakegate.provenance import jobs as jobrecords, runstore
from snakegate.provenance.runfiles import under
from snakegate.provenance.document import Q, local
from snakegate.provenance.hashing import canonical_json

JOB = Q("wfprov:ProcessRun")
LOG_ROLE = Q("sg:jobLog")
TOOL_ROLE = Q("sg:externalTool")
COMPLETED, FAILED = Q("schema:CompletedActionStatus"), Q("schema:FailedActionStatus")


def stopped_status(run_status: str, job_status: str) -> str:
    """A job's status as the run's end explains it: in a cancelled run every job that did not succeed was
    stopped by the cancel (Snakemake reports a job it killed on Ctrl-C as an error); in an interrupted run a
    job that started and never finished was killed with the run. A job that failed on its own before a kill
    stays failed."""
    if run_status == "cancelled" and job_status != "succeeded":
        return "cancelled"
    if run_status == "interrupted" and job_status == "incomplete":
        return "interrupted"
    return job_status


def params_json(reprs: list) -> list:
    """A job's params as Snakemake's metadata keeps them (each value's Python repr) turned into JSON values:
    a repr that is a Python literal becomes that value, any other stays its text."""
    out = []
    for text in reprs:
        try:
            value = ast.literal_eval(text) if isinstance(text, str) else text
            json.dumps(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = text
        out.append(value)
    return out


def tools_run_by(command: str | None, tools: dict[str, str]) -> list[str]:
    """The external tools (workflow.yaml `tools:`, name -> agent) a job's shell command runs: each named as a
    command word (at its start, or after a pipe, `;`, `&&`, `(` or `$(`)."""
    if not command or not tools:
        return []
    return [agent for name, agent in sorted(tools.items())
            if re.search(rf"(?:^|[|;&(`]|\$\()\s*(?:exec\s+)?{re.escape(name)}(?=\s|$)", command, re.MULTILINE)]


def _pick(names: dict[str, str], path: str) -> str | None:
    """The one IO name a file stem matches, if exactly one does."""
    stem = Path(path).name.split(".")[0].lower()
    exact = [n for n in names if n.lower() == stem]
    if len(exact) == 1:
        return exact[0]
    fuzzy = [n for n in names if n.lower() in stem or stem in n.lower()]
    return fuzzy[0] if len(fuzzy) == 1 else None


def _wildcards_json(wildcards: dict[str, str]) -> str:
    """canonical_json() of a str -> str mapping, without building a JSON encoder per job."""
    return "{" + ",".join(f"{_json_str(k)}:{_json_str(str(v))}" for k, v in sorted(wildcards.items())) + "}"


def script_of(code: str | None) -> str | None:
    """A `script:` directive's code is the quoted script path; anything else is a run: block."""
    if not code:
        return None
    text = code.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and "\n" not in text:
        return text[1:-1]
    return None


def _named_paths(job, direction: str) -> dict[str, str]:
    """Absolute path -> the IO name the job gave it (the guard's record of the job), {} without one."""
    named = (job.io or {}).get(direction) or {}
    return {path: name for name, paths in named.items() for path in paths}


def _one_type(declared: str | None, seen: str | None) -> str | None:
    """The artifact type of a file whose IO name declares `declared` (`a|b` when it takes either): the one the
    file was seen as when that is one of them, else the declaration."""
    if declared and "|" in declared and seen in declared.split("|"):
        return seen
    return declared or seen


def role(rule: str, direction: str, name: str) -> Q:
    return Q(f"plan:rule/{local(rule)}/{direction}/{local(name)}")


class JobRecorder:
    """Adds a run's jobs to the builder's document (see the module doc)."""

    def __init__(self, builder):
        self.b = builder
        self.rules_io = builder.rules_io

    def output_roles(self, jobs) -> dict[str, tuple[str | None, str | None]]:
        """Output file (absolute) -> (IO name, artifact type) from the job's own names, else the manifest's rule IO."""
        roles = {}
        declared = self.b.files.declared
        for job in jobs:
            names = (self.rules_io.get(job.rule) or {}).get("output") or {}
            own = _named_paths(job, "output")
            for out in job.outputs:
                abspath = self.b.files.abspath(out)
                name = own.get(abspath) if own.get(abspath) in names else None
                if name is None and len(names) == 1:
                    name = next(iter(names))
                elif name is None and abspath in declared and declared[abspath][0] in names:
                    name = declared[abspath][0]
                elif name is None and names:
                    name = _pick(names, out)
                roles[abspath] = (name, names.get(name) if name else None)
        return roles

    def input_role(self, rule: str, abspath: str, out_roles, artifacts, own: dict | None = None
                   ) -> tuple[str | None, str | None]:
        names = (self.rules_io.get(rule) or {}).get("input") or {}
        produced = out_roles.get(abspath)
        param = artifacts.get(abspath)
        ftype = (produced[1] if produced else None) or (param[1] if param else None)
        named = (own or {}).get(abspath)
        if named is not None and named in names:
            return named, _one_type(names[named], ftype)
        if len(names) == 1:
            name = next(iter(names))
            return name, names[name] or ftype
        for candidate in ((produced[0] if produced else None), (param[0] if param else None)):
            if candidate and candidate in names:
                return candidate, names[candidate]
        if ftype:
            typed = [n for n, t in names.items() if t == ftype]
            if len(typed) == 1:
                return typed[0], ftype
        name = _pick(names, abspath) if names else None
        return name, (names.get(name) if name else ftype)

    def generated_entity(self, full: str, attrs: dict | None) -> str | None:
        """The entity a job generated at `full`: at the bytes the job recorded when it ended (hashes/,
        snakegate/run/guard.py), so a file changed afterwards is another entity, marked as such."""
        files = self.b.files
        current = files.at(full, attrs, True)
        rel = under(full, files.run_dir)
        record = runstore.read_output_record(files.run_dir, rel) if rel is not None else None
        made = record.get("sha256") if record else None
        if current is None or not isinstance(made, str) or files.by_path[full].sha256 == made:
            return current
        files.at(full, {"sg:changedAfterGeneration": True})
        return files.at(full, attrs, digest=(record.get("size"), made))

    def record(self, jobs, artifacts: dict, builtins: dict[str, str]) -> str | None:
        """Add every job; returns the first failed (or cancelled) job's id. `artifacts`: input file
        (absolute) -> (param, type); `builtins`: builtin value -> its dataset entity."""
        b = self.b
        doc = b.doc
        elements = doc.elements
        relations = doc.relations.append
        files = b.files
        abspath, file_at = files.abspath, files.at
        out_roles = self.output_roles(jobs)
        hidden, key, scrub = b.secrets, b.key, b.scrub
        run, engine = b.run_ident, b.agent_ids["snakemake"]
        part_of = Q(run)
        epoch_text = jobrecords.epoch_text
        step_of = b.step
        rule_ids: dict[str, str] = {}
        input_roles: dict[tuple[str, str], tuple] = {}
        output_attrs: dict[tuple, tuple] = {}
        used_ids: set[str] = set()
        scripts: dict[str, str] = {}
        failed_ident = None
        log_role = {"prov:role": LOG_ROLE}
        tools = getattr(b, "tools", {})
        ended = runstore.parse_time(b.record.get("ended"))
        run_end = ended.timestamp() if ended else None
        jobs = sorted(jobs, key=lambda j: (j.start if j.start is not None else float("inf"), j.rule, j.outputs))
        for job in jobs:
            base = rule_ids.get(job.rule)
            if base is None:
                base = rule_ids[job.rule] = f"{run}/job/{local(job.rule)}"
            ident = base
            if job.wildcards:
                # wildcard values in key order, one path segment each: run:<id>/job/<rule>/<v1>/<v2>
                ident += "".join("/" + local(v).replace("/", "%2F") for _, v in sorted(job.wildcards.items()))
            if ident in used_ids:
                n = 2
                while f"{ident}-{n}" in used_ids:
                    n += 1
                ident = f"{ident}-{n}"
            used_ids.add(ident)
            job.status = stopped_status(b.status, job.status)
            if job.status in ("cancelled", "interrupted") and job.end is None and run_end is not None \
                    and (job.start is None or run_end >= job.start):
                job.end = run_end  # stopped with the run: it ended when the run did (for a kill, the run's bound)
            status = job.status
            attrs = {"prov:type": JOB, "wfprov:wasPartOfWorkflowRun": part_of,
                     "wfprov:describedByProcess": Q(step_of(job.rule)), "sg:rule": job.rule,
                     "schema:actionStatus": COMPLETED if status == "succeeded" else FAILED, "sg:status": status}
            if job.wildcards:
                attrs["sg:wildcards"] = _wildcards_json(job.wildcards)
            if job.shellcmd:
                attrs["sg:shellCommand"] = scrub(job.shellcmd, hidden, key) if hidden else job.shellcmd
            elif job.code:
                script = scripts.get(job.code)
                if script is None:
                    script = scripts[job.code] = script_of(job.code) or ""
                if script:
                    attrs["sg:script"] = script
                else:
                    attrs["sg:code"] = scrub(job.code, hidden, key)
            params_text = None
            if job.params:
                params_text = scrub(canonical_json(params_json(job.params)), hidden, key)
                attrs["sg:params"] = params_text
            if job.error:
                attrs["schema:error"] = scrub(job.error, hidden, key)
            if job.facts:
                for name, value in job.facts.items():
                    attrs.setdefault(name, value)
            start = epoch_text(job.start)
            elements[ident] = ["activity", start, epoch_text(job.end), attrs]
            relations(("wasAssociatedWith", (ident, engine, step_of(job.rule)), {}))
            relations(("wasStartedBy", (ident, None, run, start), {}))
            for tool in tools_run_by(job.shellcmd, tools):
                relations(("wasAssociatedWith", (ident, tool, None), {"prov:role": TOOL_ROLE}))
            if status in ("failed", "cancelled", "interrupted") and failed_ident is None:
                failed_ident = ident
            inputs = []
            own_inputs = _named_paths(job, "input") if job.io else None
            for path in job.inputs:
                cache_key = (job.rule, path)
                known = input_roles.get(cache_key)
                if known is None:
                    full = abspath(path)
                    name, ftype = self.input_role(job.rule, full, out_roles, artifacts, own_inputs)
                    known = input_roles[cache_key] = (full, {"sg:artifactType": ftype} if ftype else None,
                                                      {"prov:role": role(job.rule, "input", name)} if name else {})
                full, type_attrs, role_attrs = known
                ent = file_at(full, type_attrs)
                relations(("used", (ident, ent, None), role_attrs))
                inputs.append(ent)
            if builtins and params_text:
                for value, ent in builtins.items():
                    if value in params_text:
                        relations(("used", (ident, ent, None), {"prov:role": Q("sg:builtinDataset")}))
            for path in job.outputs:
                full = abspath(path)
                name_type = out_roles.get(full, (None, None))
                known = output_attrs.get((job.rule, name_type))
                if known is None:
                    name, ftype = name_type
                    known = output_attrs[(job.rule, name_type)] = (
                        {"sg:artifactType": ftype} if ftype else None,
                        {"prov:role": role(job.rule, "output", name)} if name else {})
                ent = self.generated_entity(full, known[0])
                if ent is None:
                    continue  # never made (failed or cancelled job): nothing to record
                relations(("wasGeneratedBy", (ent, ident, None), known[1]))
                for source in inputs:
                    relations(("wasDerivedFrom", (ent, source, ident, None, None), {}))
            for path in job.logs:
                ent = file_at(abspath(path), None, True)
                if ent is not None:
                    relations(("wasGeneratedBy", (ent, ident, None), log_role))
        return failed_ident
