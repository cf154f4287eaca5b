"""What an RO-Crate needs from a run's prov.json: its jobs with their files and roles, the run, the people.

Plain dicts in, plain data out: nothing is read or written here (compare.load_prov
reads the file). Paths are as the record spells them (registry-relative, or
absolute outside the registry); roles are the record's role IRIs in prefix form
(`plan:rule/<rule>/input/<name>`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from snakegate.provenance.compare import path_of, plain, types_of
from snakegate.provenance.document import local


@dataclass
class CrateJob:
    ident: str  # run:<id>/job/<rule>[/<wildcards>]
    rule: str
    status: str | None
    start: str | None
    end: str | None
    error: str | None
    wildcards: str | None
    used: list[tuple[str, str | None]] = field(default_factory=list)  # (path, role)
    generated: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def suffix(self) -> str:
        return self.ident.split("/job/", 1)[-1]


def jobs(prov: dict) -> list[CrateJob]:
    """The job activities (wfprov:ProcessRun) with the files they used and generated, in record order."""
    entities = prov.get("entity") or {}
    found: dict[str, CrateJob] = {}
    for ident, attrs in (prov.get("activity") or {}).items():
        rule = plain(attrs.get("sg:rule"))
        if rule and "wfprov:ProcessRun" in types_of(attrs):
            found[ident] = CrateJob(ident, rule, plain(attrs.get("sg:status")), attrs.get("prov:startTime"),
                                    attrs.get("prov:endTime"), error_of(attrs),
                                    plain(attrs.get("sg:wildcards")))
    for section, slot in (("used", "used"), ("wasGeneratedBy", "generated")):
        for rel in (prov.get(section) or {}).values():
            job = found.get(rel.get("prov:activity"))
            path = path_of(entities.get(rel.get("prov:entity")) or {})
            if job is not None and path:
                getattr(job, slot).append((path, plain(rel.get("prov:role"))))
    return list(found.values())


def error_of(attrs: dict):
    """An activity's error: `schema:error`, or `sg:error` in records made before standard terms."""
    return plain(attrs.get("schema:error")) or plain(attrs.get("sg:error"))


def run_activity(prov: dict, run_id: str) -> dict:
    activities = prov.get("activity") or {}
    by_id = next((a for a in activities.values() if "wfprov:WorkflowRun" in types_of(a)
                  and plain(a.get("dct:identifier")) == run_id and plain(a.get("sg:status"))), None)
    return by_id or activities.get(f"run:{local(run_id)}") or next(
        (a for a in activities.values() if "wfprov:WorkflowRun" in types_of(a) and plain(a.get("sg:status"))), {})


def person(prov: dict) -> dict | None:
    """The person who ran it ({name, email}), as the record names them."""
    for attrs in (prov.get("agent") or {}).values():
        if "prov:Person" in types_of(attrs) and plain(attrs.get("sg:identitySource")):
            return {"name": plain(attrs.get("prov:label")), "email": plain(attrs.get("schema:email"))}
    return None


def engine_version(prov: dict) -> str | None:
    return plain(((prov.get("agent") or {}).get("agent:snakemake") or {}).get("schema:softwareVersion"))


def plan_base(prov: dict) -> str | None:
    """The workflow's IRI (its steps are <base>rule/<rule>), from the record's `plan` prefix."""
    return (prov.get("prefix") or {}).get("plan")


def tools(prov: dict) -> list[dict]:
    """External tools the record lists ({id, name, version, path, sha256})."""
    out = []
    for ident, attrs in (prov.get("agent") or {}).items():
        if ident.startswith("agent:tool/"):
            out.append({"id": ident, "name": plain(attrs.get("schema:name")),
                        "version": plain(attrs.get("schema:softwareVersion")), "path": plain(attrs.get("sg:executable")),
                        "sha256": plain(attrs.get("schema:sha256")) or plain(attrs.get("sg:sha256"))})
    return out


def approval(prov: dict) -> dict | None:
    """The chat's approval, as the record says it: {approver, model, answered_by, backend, at, transcript_sha256,
    conversation_id}; None for a run nobody approved in a chat or MCP client."""
    activities = prov.get("activity") or {}
    found = next(((i, a) for i, a in activities.items() if "sg:Approval" in types_of(a)), None)
    if found is None:
        return None
    ident, attrs = found
    agents = prov.get("agent") or {}
    roles = {plain(r.get("prov:role")): r.get("prov:agent") for r in (prov.get("wasAssociatedWith") or {}).values()
             if r.get("prov:activity") == ident}
    model = agents.get(roles.get("sg:proposer")) or {}
    person = agents.get(roles.get("sg:approver")) or {}
    transcript = next(((prov.get("entity") or {}).get(r.get("prov:entity")) or {}
                       for r in (prov.get("used") or {}).values()
                       if r.get("prov:activity") == ident and plain(r.get("prov:role")) == "sg:transcript"), {})
    return {"approver": plain(person.get("schema:name")) or plain(person.get("prov:label")),
            "model": plain(model.get("sg:model")) or plain(model.get("schema:name")), "model_id": roles.get("sg:proposer"),
            "answered_by": plain(model.get("sg:answeredBy")), "backend": plain(model.get("sg:backend")),
            "at": attrs.get("prov:startTime"),
            "transcript_sha256": plain(transcript.get("schema:sha256")) or plain(attrs.get("sg:transcriptSha256")),
            "conversation_id": plain(transcript.get("schema:identifier")) or plain(attrs.get("sg:conversationId"))}


def snapshots(prov: dict) -> list[dict]:
    """The registry snapshots the record names ({id, commit, dirty, branch, tree, current}), the one the workflow
    is part of (what ran) first."""
    entities = prov.get("entity") or {}
    pinned = {plain(a.get("dct:isPartOf")) for a in entities.values() if "wfdesc:Workflow" in types_of(a)}
    out = []
    for ident, attrs in entities.items():
        if "sg:RegistrySnapshot" in types_of(attrs):
            out.append({"id": ident, "commit": plain(attrs.get("sg:gitCommit")), "dirty": plain(attrs.get("sg:gitDirty")),
                        "branch": plain(attrs.get("sg:gitBranch")), "tree": plain(attrs.get("sg:gitTree")),
                        "git": plain(attrs.get("sg:git")), "current": ident not in pinned})
    return sorted(out, key=lambda snap: snap["current"])


def software(prov: dict) -> list[dict]:
    """snakegate, Snakemake and Python as the record names them ({key, name, version, url})."""
    agents = prov.get("agent") or {}
    out = []
    for key in ("snakegate", "snakemake", "python"):
        attrs = agents.get(f"agent:{key}")
        if attrs:
            out.append({"key": key, "name": plain(attrs.get("schema:name")) or key,
                        "version": plain(attrs.get("schema:softwareVersion")), "url": plain(attrs.get("schema:url"))})
    return out


def job_tools(prov: dict) -> dict[str, list[str]]:
    """Job activity id -> the external tools (agent:tool/<name>) its command ran, as the record associates them."""
    out: dict[str, list[str]] = {}
    for rel in (prov.get("wasAssociatedWith") or {}).values():
        agent = str(rel.get("prov:agent") or "")
        if agent.startswith("agent:tool/") and plain(rel.get("prov:role")) == "sg:externalTool":
            out.setdefault(str(rel.get("prov:activity")), []).append(agent)
    return out


def crate_time(text: str | None) -> str | None:
    """A PROV time as the Process Run Crate wants it: UTC, milliseconds, `+00:00`."""
    if not text:
        return None
    try:
        when = _dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    when = when.astimezone(_dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + f".{when.microsecond // 1000:03d}+00:00"
