"""Provenance commands: prov, verify, rerun, fork, diff, export.

This module registers them all and holds prov and verify; the handlers of rerun and fork are in
lineage_cmds.py, of diff in diff_cmds.py, of export in export_cmds.py. Each reads a run folder's records
(runs/<run_id>/), calls the provenance layer or the runner, and shapes the answer. RUN is a run id, a unique
prefix of one, or 'latest'.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from snakegate.commands.diff_cmds import cmd_diff
from snakegate.commands.export_cmds import cmd_export
from snakegate.commands.lineage_cmds import cmd_fork, cmd_rerun
from snakegate.commands.prov_common import run_folder
from snakegate.errors import ExitCode, UserError

RUN_HELP = "run id, unique prefix, or 'latest'"
FORMATS = {"provn": "prov.provn", "json": "prov.json", "ttl": "prov.ttl"}


def register(sub, epilog: str) -> None:
    from snakegate.commands.run_cmds import add_snakemake_options

    p = sub.add_parser("prov", help="print or query a run's W3C PROV record", epilog=epilog,
                       description="Print runs/<run_id>/prov.<format>: PROV-N (default), PROV-JSON or PROV-O Turtle; "
                                   "or answer one question from it with a named SPARQL query (rdflib).")
    p.add_argument("run", help=RUN_HELP)
    ask = p.add_mutually_exclusive_group()
    ask.add_argument("--format", choices=sorted(FORMATS), default=None, help="serialisation (default provn)")
    ask.add_argument("--who", action="store_true", help="the people and software behind the run, with roles and versions")
    ask.add_argument("--inputs", action="store_true", help="the files the run used that none of its jobs made")
    ask.add_argument("--outputs", action="store_true", help="the files the run's jobs made")
    ask.add_argument("--derived", metavar="FILE", help="what FILE was made by and derived from, and what derives from it")
    p.add_argument("--json", action="store_true", help="print a query's answer as JSON")
    p.set_defaults(handler=cmd_prov)

    p = sub.add_parser("verify", help="re-hash a run's recorded files and workflow folder, or an exported crate",
                       epilog=epilog,
                       description="Re-hash every file the run's PROV record lists and the workflow folder; "
                                   "exit 1 naming each file that changed or went missing. Given an RO-Crate "
                                   "(`snakegate export` wrote it: a folder or a .zip), re-hash every file its "
                                   "metadata describes against the sha256 and size it records.")
    p.add_argument("run", help=RUN_HELP + ", or the path of an exported RO-Crate (folder or .zip)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("rerun", help="run the same invocation again and compare the outputs", epilog=epilog,
                       description="Run the run's invocation again into a new run folder (the gate proves it is the "
                                   "same invocation) and report per output whether the bytes are identical. "
                                   "Exit 0 when every output is identical, 1 when one differs or the run failed.")
    p.add_argument("run", help=RUN_HELP)
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_rerun, passes_to_snakemake=True)

    p = sub.add_parser("fork", help="run a run again with changed parameters (re-runs only what they affect)",
                       epilog=epilog,
                       description="Build a new invocation from the run's with --set changes, gate it, copy the "
                                   "parent's outputs in and re-run only the jobs downstream of the change. The "
                                   "new invocation is recorded as prov:wasDerivedFrom the parent's.")
    p.add_argument("run", help=RUN_HELP)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter change; VALUE is read as YAML (fill_mean, 3, true, [a, b], "
                        "{from: clean, output: cleaned}); dotted keys reach nested params; for a plan, "
                        "STEP.PARAM=VALUE (repeatable)")
    p.add_argument("--replace", dest="replaces", action="append", default=[], metavar="STEP=WORKFLOW",
                   help="a plan: run WORKFLOW in STEP instead (its params start afresh: give them with --set)")
    p.add_argument("--add", dest="adds", action="append", default=[], metavar="STEP=WORKFLOW",
                   help="a plan: add a step running WORKFLOW (give its params with --set STEP.PARAM=...)")
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_fork, passes_to_snakemake=True)

    p = sub.add_parser("diff", help="compare two runs: parameters, output hashes, JSON values", epilog=epilog)
    p.add_argument("run_a", metavar="RUN_A", help=RUN_HELP)
    p.add_argument("run_b", metavar="RUN_B", help=RUN_HELP)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_diff)

    p = sub.add_parser("export", help="export a run as a Workflow Run RO-Crate (Provenance Run Crate)",
                       epilog=epilog)
    p.add_argument("run", help=RUN_HELP)
    p.add_argument("--ro-crate", dest="ro_crate", required=True, metavar="DIR|ZIP",
                   help="a new or empty folder, or a path ending in .zip")
    p.add_argument("--license", default=None, metavar="URL",
                   help="license of the crate's metadata (default https://spdx.org/licenses/MIT)")
    p.add_argument("--validate", action="store_true",
                   help="check the crate with roc-validator (Provenance Run Crate 0.5, REQUIRED checks)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing ZIP, or a folder that holds an earlier RO-Crate")
    p.set_defaults(handler=cmd_export)


# ---- commands ------------------------------------------------------------------------------------
def cmd_prov(ctx) -> int:
    from snakegate.provenance import runstore
    from snakegate.provenance.compare import ProvMissing
    from snakegate.provenance.document import RENDERINGS, ensure_rendering
    run_dir = run_folder(ctx, ctx.args.run)
    args = ctx.args
    if args.who or args.inputs or args.outputs or args.derived is not None:
        from snakegate.commands.prov_query import answer
        return answer(ctx, run_dir)
    if args.json:
        raise UserError("--json goes with a question (--who, --inputs, --outputs, --derived FILE); "
                        "for the record as JSON use --format json")
    path = run_dir / FORMATS[args.format or "provn"]
    if path.name in RENDERINGS and not path.is_file() and (run_dir / "prov.json").is_file():
        try:
            path = ensure_rendering(run_dir, path.name)  # a big run defers these until someone asks
        except ProvMissing as exc:
            raise UserError(str(exc), ExitCode.INVALID) from None
    if not path.is_file():
        record = runstore.read_run(run_dir)
        detail = f"; the last attempt failed: {record['provenance_error']}" if record.get("provenance_error") else ""
        raise UserError(f"run {run_dir.name} has no {path.name} (status: {record.get('status', 'unknown')}); "
                        f"the PROV record is written when Snakemake finishes the run{detail}", ExitCode.INVALID)
    sys.stdout.write(path.read_text(encoding="utf-8"))
    return ExitCode.OK


def cmd_verify(ctx) -> int:
    from snakegate.provenance import compare
    from snakegate.provenance.rocrate import verify as crates
    from snakegate.run import integrity

    if crates.is_crate(Path(ctx.args.run)):
        return _verify_crate(ctx, Path(ctx.args.run))
    run_dir = run_folder(ctx, ctx.args.run)
    try:
        result = compare.verify(run_dir, ctx.settings.registry_root)
    except compare.ProvMissing as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None
    record = integrity.check_record(run_dir, ctx.settings.registry_root)
    ok = result.ok and record.ok
    seal = record.seal
    if ctx.args.json:
        print(json.dumps({"run": run_dir.name, "ok": ok, "checked": result.checked,
                          "mismatches": [m.__dict__ for m in result.mismatches],
                          "sources_changed": [m.__dict__ for m in result.sources_changed],
                          "record_problems": record.problems,
                          "seal": {"state": seal.state, "sha256": seal.seal_sha256, "problems": seal.problems,
                                   "added_later": seal.later}}, indent=2, sort_keys=True))
        return ExitCode.OK if ok else ExitCode.INVALID
    if result.ok:
        print(f"ok: run {run_dir.name} — all {result.checked} recorded files and the workflow folder match "
              "their recorded hashes")
    else:
        print(f"changed: run {run_dir.name} — {len(result.mismatches)} of {result.checked} recorded items no longer "
              "match:")
        for m in result.mismatches:
            print(f"  - {m.sentence()}")
    if result.sources_changed:
        print("the data roots moved on since (the run read its own staged copies, which are intact):")
        for m in result.sources_changed:
            print(f"  - {m.sentence()}")
    if record.problems:
        print(f"the record does not prove itself ({len(record.problems)} problem(s)):")
        for sentence in record.problems:
            print(f"  - {sentence}")
    if seal.state == "intact":
        print(f"sealed: seal {seal.seal_sha256[:16]}… holds and is the one in the registry's run index"
              + (f" ({', '.join(seal.later)} added since, as expected)" if seal.later else ""))
    elif seal.state == "unindexed":
        print(f"sealed, not indexed: seal {seal.seal_sha256[:16]}… holds, but this registry's run index has no seal "
              "for the run (brought from elsewhere?), so a record rewritten together with its seal would pass; "
              "compare the seal with the one you kept")
    elif seal.state == "unsealed":
        print("unsealed: the run has no seal (made before runs were sealed, or it never finished), so edits to its "
              "record cannot be detected")
    else:
        print(f"seal broken ({len(seal.problems)} problem(s)):")
        for sentence in seal.problems:
            print(f"  - {sentence}")
    return ExitCode.OK if ok else ExitCode.INVALID


def _verify_crate(ctx, path: Path) -> int:
    from snakegate.provenance.rocrate import verify as crates

    try:
        check = crates.verify_crate(path)
    except crates.CrateUnreadable as exc:
        raise UserError(f"{exc}; give a crate `snakegate export` wrote (a folder or a .zip)", ExitCode.INVALID) from None
    if ctx.args.json:
        print(json.dumps({"crate": check.crate, "ok": check.ok, "checked": check.checked, "problems": check.problems,
                          "metadata_sha256": check.metadata_sha256}, indent=2, sort_keys=True))
        return ExitCode.OK if check.ok else ExitCode.INVALID
    if check.ok:
        print(f"ok: crate {path} — all {check.checked} files match the sha256 and size its metadata records, and "
              "the run's PROV record agrees")
    else:
        print(f"changed: crate {path} — {len(check.problems)} problem(s) in {check.checked} described files:")
        for sentence in check.problems:
            print(f"  - {sentence}")
    print(f"metadata sha256 {check.metadata_sha256} (compare it with the one you kept when you exported the crate: "
          "a crate rewritten whole, metadata included, passes its own checks)")
    return ExitCode.OK if check.ok else ExitCode.INVALID
