"""What an RO-Crate needs from a run's prov.json: its jobs with their files and roles, the run, the people.

Plain dicts in, plain data out: nothing is read or written here (compare.load_prov
reads the file). Paths are as the record spells them (registry-relative, or
absolute outside the registry); roles are the record's role IRIs in prefix form
(`plan:rule/<rule>/input/<name>`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from snakegate.provenance.compare import plain, types_of
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
                                    attrs.get("prov:endTime"), plain(attrs.get("sg:error")),
                                    plain(attrs.get("sg:wildcards")))
    for section, slot in (("used", "used"), ("wasGeneratedBy", "generated")):
        for rel in (prov.get(section) or {}).values():
            job = found.get(rel.get("prov:activity"))
            path = plain((entities.get(rel.get("prov:entity")) or {}).get("sg:path"))
            if job is not None and path:
                getattr(job, slot).append((path, plain(rel.get("prov:role"))))
    return list(found.values())


def run_activity(prov: dict, run_id: str) -> dict:
    activities = prov.get("activity") or {}
    return activities.get(f"run:{local(run_id)}") or next(
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
    """External tools the record lists ({name, version, path})."""
    out = []
    for ident, attrs in (prov.get("agent") or {}).items():
        if ident.startswith("agent:tool/"):
            out.append({"name": plain(attrs.get("schema:name")), "version": plain(attrs.get("schema:softwareVersion")),
                        "path": plain(attrs.get("sg:executable"))})
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
