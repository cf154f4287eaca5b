"""Registry CI commands: `check` (static contract check) and `test` (run the test invocations)."""

from __future__ import annotations

import json
import sys

from snakegate.errors import ExitCode, UserError

CHANGED_HELP = ("only workflows whose folder changed since the git revision --base (working tree and untracked "
                "files included); all of them when a shared file changed (snakegate.toml, schemas/, data/, ...)")
BASE_HELP = "the git revision --changed compares with (default: HEAD, i.e. what is not committed yet)"
SINCE_HELP = "the same as --changed --base REV"


def _changed_options(p) -> None:
    p.add_argument("--changed", action="store_true", help=CHANGED_HELP)
    p.add_argument("--base", metavar="REF", help=BASE_HELP)
    p.add_argument("--changed-since", metavar="REV", help=SINCE_HELP)


def register(sub, epilog: str) -> None:
    p = sub.add_parser(
        "check", epilog=epilog,
        help="prove workflows' contracts against their Snakefiles, DAGs and examples (no job runs)",
        description="For each workflow: config keys read == params declared; x-artifact params consumed, declared "
                    "outputs produced, no hidden inputs; every rule with outputs typed in workflow.yaml and every DAG "
                    "edge type-consistent; examples pass the gate and build; snakemake --lint, snakefmt and "
                    "declared tools as warnings.")
    p.add_argument("ids", nargs="*", metavar="ID", help="workflow ids (default: every folder under workflows/)")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object: {"ok", "workflows", "findings": [{severity, workflow, code, rule, '
                        'file, line, message, hint}]}')
    _changed_options(p)
    p.add_argument("--no-hygiene", action="store_true", help="skip the warnings-only lint, snakefmt and tool checks")
    p.add_argument("-j", "--jobs", type=_positive, metavar="N",
                   help="check up to N workflows at once, each in its own process (default: the usable cores)")
    p.set_defaults(handler=cmd_check)

    p = sub.add_parser(
        "test", epilog=epilog,
        help="run workflows' test invocations with real Snakemake and compare outputs to the expected files",
        description="Runs each workflows/<id>/test/<case>/config.yaml (gated, with workflows/<id>/test added to the "
                    "data roots) in a temporary folder and compares every declared output to "
                    "test/<case>/expected/<path>: byte-identical, or within test.float_tolerance for named JSON outputs.")
    p.add_argument("ids", nargs="*", metavar="ID", help="workflow ids (default: every workflow)")
    p.add_argument("--case", action="append", metavar="NAME", help="run only this test case (repeatable)")
    _changed_options(p)
    p.add_argument("--update", action="store_true",
                   help="write this run's outputs as the expected files (review the diff before committing)")
    p.add_argument("--profile", metavar="DIR",
                   help="Snakemake profile folder (or $SNAKEMAKE_PROFILE), held to the allow-list of `snakegate run`; "
                        "the workflow's own profiles/default/ is never read")
    p.set_defaults(handler=cmd_test)

    p = sub.add_parser(
        "draft", epilog=epilog,
        help="turn an existing Snakemake workflow folder into workflows/<id>/ (no model, deterministic)",
        description="Reads the workflow with the check's own reader (either layout, include:, modules, "
                    "config/config.yaml, a YAML config schema, sample sheets), copies its files unchanged and "
                    "writes workflow.yaml, schema.json, examples/config.yaml and a SKILL.md skeleton; prints what "
                    "you still have to decide. An existing workflows/<id>/ is never touched. Exit 1 when it could "
                    "not evaluate something it had to write (it says what, under 'draft could not know'): the "
                    "files are written but not finished.")
    p.add_argument("path", metavar="PATH", help="the workflow's folder (holding Snakefile or workflow/Snakefile)")
    p.add_argument("--id", dest="wf_id", metavar="ID", help="workflow id (kebab-case; default: from the folder name)")
    p.set_defaults(handler=cmd_draft)


def cmd_draft(ctx) -> int:
    from pathlib import Path

    from snakegate.check.reading import SnakefileSyntaxError
    from snakegate.contribute.draft import draft

    try:
        result = draft(Path(ctx.args.path), ctx.settings.registry_root, ctx.args.wf_id)
    except SnakefileSyntaxError as exc:
        raise UserError(f"{exc.file}:{exc.line or '?'}: the workflow does not parse: {exc.message}; fix it first "
                        "(`snakemake -n` shows the same error)", ExitCode.INVALID) from None
    root = ctx.settings.registry_root
    print(f"drafted {result.folder.relative_to(root) if result.folder.is_relative_to(root) else result.folder} "
          f"({len(result.written)} files)")
    print("still to decide:")
    for item in result.decide:
        print(f"  - {item}")
    if result.unsure:  # written, but not right yet: an exit 0 would let a script take it as finished
        print("draft could not know (the draft is incomplete until you fill these in):")
        for item in result.unsure:
            print(f"  - {item}")
        return ExitCode.INVALID
    return ExitCode.OK


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1 (got `{text}`)")
    return value


def _base(ctx) -> str | None:
    """The revision --changed / --changed-since compares with; None when every selected workflow counts."""
    args = ctx.args
    if args.changed_since and args.base and args.changed_since != args.base:
        raise UserError(f"--changed-since {args.changed_since} and --base {args.base} name two revisions; "
                        "give one (--changed --base REF)", ExitCode.USAGE)
    if args.base and not args.changed and not args.changed_since:
        raise UserError(f"--base {args.base} says what --changed compares with; add --changed", ExitCode.USAGE)
    if args.changed_since:
        return args.changed_since
    return (args.base or "HEAD") if args.changed else None


def _folders(ctx, say=None):
    """The selected workflow folders, narrowed to what changed since --base; `say` hears which were skipped."""
    from snakegate.check import changes, select

    root = ctx.settings.registry_root
    folders = select(root, ctx.args.ids)
    base = _base(ctx)
    if base is None:
        return folders
    found = changes(root, base)
    if found.all:
        if say:
            say(f"{found.shared} changed since {base}: every workflow is checked")
        return folders
    skipped = [f.name for f in folders if f.name not in found.ids]
    if say and skipped:
        say(f"skipped, unchanged since {base}: {', '.join(skipped)}")
    return [f for f in folders if f.name in found.ids]


def cmd_check(ctx) -> int:
    from snakegate.check import check_workflows

    notes: list[str] = []
    folders = _folders(ctx, notes.append)
    plans = _plans(ctx)
    if not ctx.args.json:
        for note in notes:
            print(note)
    if not folders and not plans:
        return _nothing(ctx, "check", as_json=ctx.args.json)
    report = check_workflows(folders, ctx.registry, ctx.settings, hygiene=not ctx.args.no_hygiene,
                             jobs=ctx.args.jobs)
    refused = {path: _plan_errors(ctx, path) for path in plans}
    ok = report.ok and not any(refused.values())
    if ctx.args.json:
        answer = report.as_json()
        answer["ok"] = ok
        if _base(ctx) is not None:
            checked = set(report.workflows)
            answer["base"] = _base(ctx)
            answer["skipped"] = [f.name for f in _select_all(ctx) if f.name not in checked]
        answer["plans"] = {path.stem: [e.model_dump() for e in errors] for path, errors in refused.items()}
        print(json.dumps(answer, indent=2))
    else:
        print_report(report)
        for path, errors in refused.items():
            print(f"{'FAIL ' if errors else 'ok   '} plan {path.stem} (plans/{path.name})")
            for err in errors:
                print(f"  error [{err.code}] {err.path}: {err.message}")
                if err.hint:
                    print(f"      fix: {err.hint}")
        if plans:
            print(f"{len(plans)} curated plan(s) gated: {sum(1 for e in refused.values() if e)} refused")
    return ExitCode.OK if ok else ExitCode.INVALID


def _plans(ctx) -> list:
    """The curated plans (plans/*.yaml) a whole-registry check or test covers; none when workflows are named."""
    from snakegate.contribute.plancases import curated_plans

    return [] if ctx.args.ids or getattr(ctx.args, "case", None) else curated_plans(ctx.settings.registry_root)


def _plan_errors(ctx, path) -> list:
    from snakegate.contribute.plancases import check_plan

    return check_plan(path, ctx.registry, ctx.settings)


def _select_all(ctx) -> list:
    from snakegate.check import select

    return select(ctx.settings.registry_root, ctx.args.ids)


def _nothing(ctx, what: str, as_json: bool = False) -> int:
    base = _base(ctx)
    if as_json:
        answer = {"ok": True, "workflows": [], "findings": []}
        if base is not None:
            answer.update(base=base, skipped=[f.name for f in _select_all(ctx)])
        print(json.dumps(answer, indent=2))
    else:
        since = f" changed since {base}" if base else ""
        print(f"no workflow{since}; nothing to {what}")
    return ExitCode.OK


def print_report(report, stream=None) -> None:
    stream = stream or sys.stdout  # looked up per call: tests and callers may swap sys.stdout
    by_wf: dict[str, list] = {wf: [] for wf in report.workflows}
    for f in report.findings:
        by_wf.setdefault(f.workflow, []).append(f)
    for wf, found in by_wf.items():
        errors = sum(1 for f in found if f.severity == "error")
        warnings = len(found) - errors
        if not found:
            print(f"ok    {wf}", file=stream)
            continue
        verdict = "FAIL " if errors else "ok   "
        print(f"{verdict} {wf}: {errors} error(s), {warnings} warning(s)", file=stream)
        for f in sorted(found, key=lambda f: (f.severity != "error", f.code, f.file or "", f.line or 0)):
            where = f.file or ""
            if f.line:
                where += f":{f.line}"
            rule = f" rule {f.rule}" if f.rule else ""
            print(f"  {f.severity} [{f.code}]{rule}{' ' + where if where else ''}", file=stream)
            print(f"      {f.message}", file=stream)
            if f.hint:
                print(f"      fix: {f.hint}", file=stream)
    errors = sum(1 for f in report.findings if f.severity == "error")
    warnings = len(report.findings) - errors
    print(f"\n{len(report.workflows)} workflow(s) checked: {errors} error(s), {warnings} warning(s)"
          + ("" if errors else " — all contracts hold"), file=stream)


def cmd_test(ctx) -> int:
    from snakegate.contribute.testcases import find_cases, run_case
    from snakegate.run.profiles import checked_profile

    profile = checked_profile(ctx.args.profile, None)  # refused keys stop here, before any case runs
    folders = _folders(ctx, print)
    plans = _plans(ctx)
    if not folders and not plans:
        return _nothing(ctx, "test")
    failed = 0
    total = 0
    skipped = 0
    for folder in folders:
        wf = ctx.registry.get(folder.name)
        if wf is None:
            reason = ctx.registry.broken.get(folder.name, "workflow.yaml is missing")
            print(f"FAIL  {folder.name}: cannot load the workflow: {reason.splitlines()[0]}")
            print(f"      fix: run `snakegate check {folder.name}` and fix what it reports")
            failed += 1
            continue
        cases = find_cases(wf.folder)
        if ctx.args.case:
            unknown = sorted(set(ctx.args.case) - {c.name for c in cases})
            if unknown and len(folders) == 1:
                raise UserError(f"{wf.id} has no test case {', '.join(unknown)}; its cases: "
                                f"{', '.join(c.name for c in cases) or 'none'}", ExitCode.INVALID)
            cases = [c for c in cases if c.name in ctx.args.case]
        if not cases:
            if ctx.args.case:
                continue
            print(f"FAIL  {wf.id}: no test cases (expected workflows/{wf.id}/test/<case>/config.yaml)")
            print("      fix: add a test invocation and its expected outputs (see workflows/CONTRIBUTING.md)")
            failed += 1
            continue
        for case in cases:
            total += 1
            result = run_case(ctx.registry, ctx.settings, wf, case, update=ctx.args.update, profile=profile)
            print_case(result)
            if result.skipped:
                skipped += 1
            elif not result.ok:
                failed += 1
    from snakegate.contribute.plancases import run_plan

    for path in plans:  # each curated plan, run for real and compared step by step
        total += 1
        result = run_plan(path, ctx.registry, ctx.settings, update=ctx.args.update, profile=profile)
        print_case(result)
        if result.skipped:
            skipped += 1
        elif not result.ok:
            failed += 1
    passed = max(total - failed - skipped, 0)
    print(f"\n{total} test case(s): {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if skipped:
        # a case that could not run proves nothing: never a pass (CI must not go green on it)
        print(f"{skipped} test case(s) could not run here, so nothing proves them: install what each `skip` line "
              "names (or run the tests where it is installed)")
    return ExitCode.OK if failed == 0 and skipped == 0 else ExitCode.INVALID


def print_case(result, stream=None) -> None:
    stream = stream or sys.stdout
    label = f"{result.workflow}/{result.case}"
    if result.skipped:
        print(f"skip  {label}: {result.skipped}", file=stream)
        return
    print(f"{'ok   ' if result.ok else 'FAIL '} {label}", file=stream)
    for err in result.gate_errors:
        print(f"      refused by the gate: {err.path or '(file)'} [{err.code}]: {err.message}", file=stream)
        if err.hint:
            print(f"      fix: {err.hint}", file=stream)
    if result.run_failed is not None:
        print("      Snakemake failed; the end of its log:", file=stream)
        for line in result.run_failed.splitlines():
            print(f"        {line}", file=stream)
    for out in result.outputs:
        print(f"      {out.status:<16} {out.name} ({out.path})" + (f": {out.detail}" if out.detail and "\n" not in out.detail else ""),
              file=stream)
        if out.detail and "\n" in out.detail:
            for line in out.detail.splitlines():
                print(f"        {line}", file=stream)
    for path in result.updated:
        print(f"      updated expected/{path}", file=stream)
    for path in getattr(result, "beside_inputs", []):
        print(f"      warning: the run wrote beside its inputs: {path}", file=stream)
