"""`snakegate prov RUN --who | --inputs | --outputs | --derived FILE [--json]`: answers from the PROV record.

Thin glue: load the run's PROV-O graph, run the named SPARQL query
(snakegate.provenance.query), shape the rows as text or JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from snakegate.errors import ExitCode, UserError


def _job(ident: str | None) -> str:
    if ident and ident.endswith("/seed"):
        return "the copy from the parent run"
    if ident and ident.endswith("/stage"):
        return "the staging of the inputs"
    return "job " + ident.split("/job/", 1)[-1] if ident and "/job/" in ident else (ident or "-")


def _role(role: str | None) -> str:
    """A rule IO role (<workflow>/rule/<rule>/input/<name>) by its IO name, an sg: role by its term."""
    if role and "/rule/" in role:
        return role.rsplit("/", 1)[-1]
    return (role or "-").removeprefix("sg:")


def _sha(digest: str | None) -> str:
    return (digest or "-")[:12]


def answer(ctx, run_dir: Path) -> int:
    from snakegate.provenance import query
    from snakegate.provenance.compare import ProvMissing

    args = ctx.args
    try:
        graph = query.load(run_dir)
    except FileNotFoundError:
        raise UserError(f"run {run_dir.name} has no PROV record yet; it is written when Snakemake finishes the run",
                        ExitCode.INVALID) from None
    except ProvMissing as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None
    if args.derived is not None:
        try:
            path = query.record_path(run_dir, ctx.settings.registry_root, args.derived, query.known_paths(graph))
        except query.QueryError as exc:
            raise UserError(str(exc), ExitCode.INVALID) from None
        result = query.derived(graph, path)
        if args.json:
            print(json.dumps(result, indent=2, sort_keys=True))
            return ExitCode.OK
        made = ", ".join(f"{_job(m['job'])} ({m['status']})" for m in result["made_by"]) or "no job of this run"
        print(f"{path}  sha256 {_sha(result['sha256'])}…  made by {made}")
        for title, rows in (("derived from", result["derived_from"]), ("derived into", result["derived_into"])):
            print(f"{title} ({len(rows)}):" if rows else f"{title}: nothing")
            for row in rows:
                print(f"  {row['path']}  {_sha(row['sha256'])}…  made by {_job(row['job']) if row['job'] else 'no job of this run'}")
        return ExitCode.OK
    name = "who" if args.who else "inputs" if args.inputs else "outputs"
    rows = query.run(graph, name)
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
        return ExitCode.OK
    if name == "who":
        for row in rows:
            where = {"wfprov:WorkflowRun": "run", "sg:GateDecision": "gate", "sg:Approval": "approval"}.get(
                row["kind"], row["kind"] or "-")
            version = f" {row['version']}" if row["version"] and row["version"] != "unknown" else ""
            print(f"  {where:<9} {_role(row['role']):<15} {row['name']}{version}")
    else:
        for row in rows:
            extra = f"  declared output {row['declared']}" if row.get("declared") else ""
            print(f"  {row['path']}  {_sha(row['sha256'])}…  {_job(row['job'])}  role {_role(row['role'])}{extra}")
        print(f"{len({r['path'] for r in rows})} file(s)")
    return ExitCode.OK
