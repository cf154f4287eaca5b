"""`snakegate test`: run a workflow's test invocations for real and compare outputs to the expected files.

Each `workflows/<id>/test/<case>/config.yaml` is a run config. It is gated
(with `workflows/<id>/test` added to the data roots), then the workflow's
Snakefile runs standalone with real Snakemake in a temporary folder, and each
output declared in workflow.yaml is compared with
`test/<case>/expected/<declared path>`: byte-identical, or, for a JSON output
named in the manifest's `test.float_tolerance`, equal up to that absolute
tolerance on numbers. The comparison functions are pure; running Snakemake
and reading files happen in `run_case`. Nothing is written into the workflow
folder unless `update=True` (which rewrites the expected files from this run).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from snakegate.models import GateError
from snakegate.runconfig import dump_yaml, read_run_config
from snakegate.tools import only_tools_missing

Status = Literal["identical", "differs", "missing", "no expected file"]
# Same thread counts everywhere, so BLAS and friends give the same bits on every machine.
DETERMINISTIC_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
LOG_TAIL_LINES = 30
DIFF_LINES = 20


@dataclass
class OutputResult:
    name: str
    path: str
    status: Status
    detail: str | None = None


@dataclass
class CaseResult:
    workflow: str
    case: str
    gate_errors: list[GateError] = field(default_factory=list)
    run_failed: str | None = None  # tail of Snakemake's log
    outputs: list[OutputResult] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    # Why the case was not run on this machine (a declared external tool is missing); not a failure.
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return (not self.gate_errors and self.run_failed is None
                and all(o.status == "identical" for o in self.outputs))


def find_cases(folder: Path) -> list[Path]:
    """The case folders of a workflow: test/<case>/ holding a config.yaml."""
    return sorted(p.parent for p in (folder / "test").glob("*/config.yaml"))


# -- pure comparison ---------------------------------------------------------------------------


def compare_bytes(actual: bytes, expected: bytes, tolerance: float | None = None) -> tuple[Status, str | None]:
    """(status, detail) for one output; `tolerance` compares numbers inside JSON."""
    if actual == expected:
        return "identical", None
    if tolerance is not None:
        try:
            a, e = json.loads(actual), json.loads(expected)
        except (ValueError, UnicodeDecodeError):
            pass
        else:
            where = json_difference(a, e, tolerance)
            if where is None:
                return "identical", f"equal within tolerance {tolerance:g}"
            return "differs", f"beyond tolerance {tolerance:g} at {where}"
    try:
        a_text, e_text = actual.decode("utf-8"), expected.decode("utf-8")
    except UnicodeDecodeError:
        first = next((i for i, (x, y) in enumerate(zip(actual, expected)) if x != y), min(len(actual), len(expected)))
        return "differs", (f"binary files differ: {len(actual)} bytes vs {len(expected)} expected, "
                           f"first difference at byte {first}")
    return "differs", text_diff(a_text, e_text)


def text_diff(actual: str, expected: str, limit: int = DIFF_LINES) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm="", n=1))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines) or "the files differ only in line endings or a trailing newline"


def json_difference(actual: Any, expected: Any, tol: float, path: str = "$") -> str | None:
    """Where two JSON values differ beyond `tol` on numbers (None when they agree)."""
    if _is_number(actual) and _is_number(expected):
        if math.isnan(actual) and math.isnan(expected):
            return None
        if actual == expected or abs(actual - expected) <= tol:
            return None
        return f"{path}: {actual!r} vs expected {expected!r}"
    if type(actual) is not type(expected):
        return f"{path}: {type(actual).__name__} vs expected {type(expected).__name__}"
    if isinstance(actual, dict):
        if set(actual) != set(expected):
            return f"{path}: keys {sorted(set(actual) ^ set(expected))} differ"
        for key in sorted(actual):
            where = json_difference(actual[key], expected[key], tol, f"{path}.{key}")
            if where:
                return where
        return None
    if isinstance(actual, list):
        if len(actual) != len(expected):
            return f"{path}: {len(actual)} items vs expected {len(expected)}"
        for i, (x, y) in enumerate(zip(actual, expected)):
            where = json_difference(x, y, tol, f"{path}[{i}]")
            if where:
                return where
        return None
    return None if actual == expected else f"{path}: {actual!r} vs expected {expected!r}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# -- the edge: gate, run, read -----------------------------------------------------------------


def run_case(registry, settings, wf, case_dir: Path, *, update: bool = False) -> CaseResult:
    """Gate test/<case>/config.yaml, run the workflow standalone, compare the declared outputs."""
    from snakegate.gate import gate

    result = CaseResult(workflow=wf.id, case=case_dir.name)
    data, yaml_error = read_run_config(case_dir / "config.yaml")
    if yaml_error is not None:
        result.gate_errors = [yaml_error]
        return result
    if isinstance(data, dict) and data.get("workflow") != wf.id:
        result.gate_errors = [GateError(path="workflow", code="unknown_workflow",
                                        message=f"the test config names workflow `{data.get('workflow')}`, not `{wf.id}`",
                                        hint=f"set `workflow: {wf.id}`")]
        return result
    verdict = gate(registry, data, settings.with_data_roots(wf.folder / "test"))
    if not verdict.ok:
        if only_tools_missing(verdict.errors):
            result.skipped = "; ".join(f"{e.message} ({e.hint})" for e in verdict.errors)
            return result
        result.gate_errors = list(verdict.errors)
        return result

    with tempfile.TemporaryDirectory(prefix=f"snakegate-test-{wf.id}-") as tmp:
        tmp = Path(tmp)
        params = tmp / "params.yaml"
        params.write_text(dump_yaml(verdict.resolved_params), encoding="utf-8")
        workdir = tmp / "work"
        workdir.mkdir()
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", "-s", str(wf.snakefile.resolve()), "--configfile", str(params),
             "-d", str(workdir), "--cores", "1", "--nolock"],
            capture_output=True, text=True, cwd=tmp, env={**os.environ, **DETERMINISTIC_ENV})
        if proc.returncode != 0:
            result.run_failed = log_tail(proc.stdout + "\n" + proc.stderr) + _job_logs(workdir)
            return result
        tolerances = wf.manifest.test.float_tolerance
        for name, decl in wf.manifest.outputs.items():
            actual = workdir / decl.path
            expected = case_dir / "expected" / decl.path
            if not actual.is_file():
                result.outputs.append(OutputResult(name, decl.path, "missing", "the run did not write it"))
                continue
            if update:
                expected.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(actual, expected)
                result.updated.append(decl.path)
            if not expected.is_file():
                result.outputs.append(OutputResult(name, decl.path, "no expected file",
                                                   f"add {expected} (run `snakegate test {wf.id} --update` to write it)"))
                continue
            status, detail = compare_bytes(actual.read_bytes(), expected.read_bytes(), tolerances.get(name))
            result.outputs.append(OutputResult(name, decl.path, status, detail))
    return result


def _job_logs(workdir: Path) -> str:
    """The tails of the jobs' own log files (logs/*.log), where scripts write their tracebacks."""
    parts = []
    for log in sorted((workdir / "logs").rglob("*.log")) if (workdir / "logs").is_dir() else []:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            parts.append(f"\n--- {log.relative_to(workdir)} ---\n{log_tail(text, 15)}")
    return "".join(parts)
