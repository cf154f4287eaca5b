"""Curated plans in the registry's CI: `plans/<id>.yaml` is gated by `snakegate check` and run by `snakegate test`.

A curated plan is a plan config a researcher would run (plans/<id>.yaml; snakegate.plan). `check_plan`
gates it whole (every step's contract and data, every reference against the declared output, the
composed DAG; a missing external tool is the check's warning, as for a workflow). `run_plan` runs it
for real into a temporary runs folder (snakegate.run.runner, exactly as `snakegate run` does) and compares
every step's declared outputs with plans/<id>/expected/steps/<step>/<path>, each as its workflow's
`test.compare` says (snakegate.contribute.compare.compare_output). Then the run's verdict (every step's
`evaluate:` checks, named `<step>.<check>`, as run.json records it) must be what plans/<id>/verdict.yaml
expects — the same file a workflow's test case has (`verdict: pass|fail|unknown`, optionally
`checks: {<step>.<check>: pass|fail|unknown}`); without the file, a plan whose steps declare checks is
expected to pass every one. Writes only in the temporary folder, and the expected files with `update`.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

from snakegate.config.read import read_run_config
from snakegate.contribute.compare import compare_output
from snakegate.contribute.testcases import (VERDICT_FILE, CaseResult, OutputResult, compare_verdict,
                                            read_expected_verdict)
from snakegate.gate.tools import only_tools_missing
from snakegate.models import GateError

PLANS_DIR = "plans"


def curated_plans(root: Path) -> list[Path]:
    return sorted((Path(root) / PLANS_DIR).glob("*.yaml"))


def plan_id(path: Path) -> str:
    return Path(path).stem


def _read(path: Path) -> tuple[dict | None, list[GateError]]:
    from snakegate.plan.config import is_plan

    data, error = read_run_config(path)
    if error is not None:
        return None, [error]
    if not is_plan(data):
        return None, [GateError(path="steps", code="plan_shape", message=f"{path.name} is not a plan (no `steps`)",
                                hint="a curated plan is a plan config: `steps:` with one entry per step")]
    return data, []


def check_plan(path: Path, registry, settings) -> list[GateError]:
    """The gate's refusals of a curated plan (tools not installed here are left to `snakegate test`)."""
    from snakegate.plan.prove import gate_plan

    data, errors = _read(path)
    if data is None:
        return errors
    return gate_plan(registry, data, settings, check_tools=False).errors


def run_plan(path: Path, registry, settings, *, update: bool = False, profile: str | None = None) -> CaseResult:
    """Run a curated plan for real and compare every step's declared outputs with its expected files; `profile`
    (checked by snakegate.run.profiles) reaches the run as under `snakegate run`."""
    from snakegate.plan.prove import gate_plan
    from snakegate.run import runner

    result = CaseResult(workflow="plan", case=plan_id(path))
    data, errors = _read(path)
    if data is None:
        result.gate_errors = errors
        return result
    verdict = gate_plan(registry, data, settings)
    if not verdict.ok:
        if only_tools_missing(verdict.errors):
            result.skipped = "; ".join(f"{e.message} ({e.hint})" for e in verdict.errors)
        else:
            result.gate_errors = list(verdict.errors)
        return result
    expected_root = Path(path).with_suffix("") / "expected"
    with tempfile.TemporaryDirectory(prefix=f"snakegate-plan-{plan_id(path)}-") as tmp:
        # the run's own Snakemake reads the settings again: the temporary runs folder reaches it by SNAKEGATE_RUNS
        local = dataclasses.replace(settings, runs_dir=Path(tmp) / "runs")
        kept = os.environ.get("SNAKEGATE_RUNS")
        os.environ["SNAKEGATE_RUNS"] = str(local.runs_dir)
        try:
            outcome = runner.execute(registry, local, {k: v for k, v in data.items() if k != "run_id"},
                                     runner.RunOptions(cores=2, profile=profile))
        except runner.GateRejected as exc:
            result.gate_errors = list(exc.result.errors)
            return result
        finally:
            if kept is None:
                os.environ.pop("SNAKEGATE_RUNS", None)
            else:
                os.environ["SNAKEGATE_RUNS"] = kept
        if outcome.status != "succeeded":
            result.run_failed = f"the plan's run is {outcome.status}: {outcome.record.get('error') or ''}"
            return result
        for out in outcome.record.get("outputs") or []:
            step, _, name = out["name"].partition(".")
            rel = f"steps/{step}/" + out["path"].split(f"/steps/{step}/", 1)[1]
            wf = registry.get(verdict.steps[step].workflow)
            result.outputs.append(_compare(wf, name, rel, out["type"], outcome.run_dir / rel, expected_root / rel,
                                           update, result))
        result.outputs += judge_plan(path, outcome.record)
    return result


def judge_plan(path: Path, record: dict) -> list[OutputResult]:
    """The plan's run's verdict (run.json's, as the run recorded it) against plans/<id>/verdict.yaml (or `pass`
    without it, when a step declares checks): one result, "as expected" or "not as expected" naming each check."""
    wanted = Path(path).with_suffix("") / VERDICT_FILE
    given = wanted.exists()
    found = record.get("verdict")
    shown = f"{PLANS_DIR}/{plan_id(path)}/{VERDICT_FILE}" if given else \
        f"no {PLANS_DIR}/{plan_id(path)}/{VERDICT_FILE}: pass expected"
    if not given and isinstance(found, dict) and not found.get("checks"):
        return []  # no step declares a check, and nothing is expected of them
    expected, problem = read_expected_verdict(wanted)
    if problem:
        return [OutputResult("verdict", shown, "not as expected", problem)]
    if not isinstance(found, dict) or not isinstance(found.get("checks"), list):
        return [OutputResult("verdict", shown, "not as expected", "the plan's run recorded no verdict")]
    status, detail = compare_verdict(found, expected)
    return [OutputResult("verdict", shown, status, detail)]


def _compare(wf, name: str, rel: str, type_name: str, actual: Path, expected: Path, update: bool,
             result: CaseResult) -> OutputResult:
    how = wf.manifest.test.compare.get(name)
    if not actual.is_file():
        return OutputResult(name, rel, "missing", "the run did not write it")
    if how is not None and how.exists:
        return OutputResult(name, rel, "identical" if actual.stat().st_size else "differs",
                            "compared by existence only")
    if update:
        expected.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(actual, expected)
        result.updated.append(rel)
    if not expected.is_file():
        return OutputResult(name, rel, "no expected file", f"add {expected} (run `snakegate test --update`)")
    tolerance = how.tolerance if how is not None and how.tolerance is not None else \
        wf.manifest.test.float_tolerance.get(name)
    status, detail = compare_output(actual.read_bytes(), expected.read_bytes(), type_name, tolerance,
                                    how.ignore_lines if how is not None else [])
    return OutputResult(name, rel, status, detail)
