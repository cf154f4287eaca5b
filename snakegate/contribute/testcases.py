"""`snakegate test`: run a workflow's test invocations for real and compare outputs to the expected files.

Each `workflows/<id>/test/<case>/config.yaml` is a run config. It is gated
(with `workflows/<id>/test` added to the data roots), then the workflow's
Snakefile runs standalone with real Snakemake in a temporary folder, started as
`snakegate run` starts it (no workflow profile; a `--profile` only after the
same allow-list, snakegate.run.profiles), and each output declared in
workflow.yaml (patterns expanded from the params; only the case's
`test.targets` when it names some, and Snakemake is asked for those alone) is
compared with `test/<case>/expected/<path>`: byte-identical by default, or as
`test.compare.<output>` says — lines matching `ignore_lines` left out, numbers
in JSON/CSV/TSV within `tolerance`, or `exists` (not empty) for human-facing
reports; `test.float_tolerance` still works for JSON. Then each output's declaration
is held against the real files: a table's header must equal its declared
`columns` (computed from the case's params and its real input headers), every
declared JSON `keys` pointer must resolve, and an output with `when` must exist
exactly when its condition holds; a declaration that lies fails the case. Then the case's run is judged by
the workflow's `evaluate:` checks (snakegate.contract.evaluate) and its verdict must be what
`test/<case>/verdict.yaml` expects (`verdict: pass|fail|unknown`, optionally `checks: {<check>: pass|fail|unknown}`;
without the file a case is expected to pass every check), so a check that cannot tell a good run from a bad one
fails the registry's CI. A sample sheet's relative paths, which the gate
resolved against the registry root, reach the run as absolute ones (snakegate.gate.sheet_paths). Files the run writes
beside its inputs (a `.fai` next to a reference) are reported, and the ones it
created are removed again; the workflow's content hash never covers test/.
The comparisons are pure (snakegate.contribute.compare); running Snakemake and reading files happen
in `run_case`. Nothing is written into the workflow folder unless
`update=True` (which rewrites the expected files from this run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.contribute.compare import Status, compare_output
from snakegate.models import GateError
from snakegate.contract.outputs import (
    PatternError, column_difference, declared_columns, expand, expand_outputs, missing_keys, param_schema,
    param_value, produced_when,
)
from snakegate.config.read import read_run_config
from snakegate.config.write import dump_config
from snakegate.gate.sheet_paths import with_absolute_paths
from snakegate.gate.tools import only_tools_missing

# A declaration that could not be held against the files (an input's header is unknown) is said, not failed.
PASSING = ("identical", "as declared", "not proven", "as expected")
VERDICT_FILE = "verdict.yaml"  # test/<case>/verdict.yaml: the verdict the case's run must get
# Same thread counts everywhere, so BLAS and friends give the same bits on every machine.
DETERMINISTIC_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
LOG_TAIL_LINES = 30


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
    beside_inputs: list[str] = field(default_factory=list)  # files the run wrote next to its inputs
    # Why the case was not run on this machine (a declared external tool is missing); not a failure.
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return (not self.gate_errors and self.run_failed is None
                and all(o.status in PASSING for o in self.outputs))


def find_cases(folder: Path) -> list[Path]:
    """The case folders of a workflow: test/<case>/ holding a config.yaml."""
    return sorted(p.parent for p in (folder / "test").glob("*/config.yaml"))


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# -- the edge: gate, run, read -----------------------------------------------------------------


def run_case(registry, settings, wf, case_dir: Path, *, update: bool = False,
             profile: str | None = None) -> CaseResult:
    """Gate test/<case>/config.yaml, run the workflow standalone, compare the declared outputs (only the case's
    `test.targets` when it names some). `profile` is a profile file that passed snakegate.run.profiles."""
    from snakegate.gate.prove import gate

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

    beside = _snapshot(_input_folders(wf.schema, verdict.resolved_params))
    with tempfile.TemporaryDirectory(prefix=f"snakegate-test-{wf.id}-") as tmp:
        tmp = Path(tmp)
        params = tmp / "params.yaml"
        # Snakemake works in tmp/work, not in the registry root the gate resolved sheet paths against
        run_params = with_absolute_paths(wf.schema, verdict.resolved_params, settings.registry_root, tmp / "sheets")
        params.write_text(dump_config(run_params), encoding="utf-8")
        workdir = tmp / "work"
        workdir.mkdir()
        chosen = wf.manifest.test.targets.get(case_dir.name)
        outputs = {n: d for n, d in wf.manifest.outputs.items() if chosen is None or n in chosen}
        targets = [path for _, path, _ in expand_outputs(outputs, verdict.resolved_params, wf.schema)] if chosen \
            else []
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", "-s", str(wf.snakefile.resolve()), "--configfile", str(params),
             "-d", str(workdir), *snakemake_options(profile), *targets],
            capture_output=True, text=True, cwd=tmp, env={**os.environ, **DETERMINISTIC_ENV})
        if proc.returncode != 0:
            result.run_failed = log_tail(proc.stdout + "\n" + proc.stderr) + _job_logs(workdir)
            result.beside_inputs = _restore(beside, _snapshot(beside))
            return result
        for name, path, type_name in expand_outputs(outputs, verdict.resolved_params, wf.schema):
            result.outputs.append(_compare_output(wf, case_dir, workdir, name, path, type_name, update, result))
        result.outputs += hold_declarations(wf, workdir, verdict.resolved_params, settings.registry_root, outputs)
        result.outputs += judge_case(wf, case_dir, workdir, verdict.resolved_params)
    result.beside_inputs = _restore(beside, _snapshot(beside))
    return result


def _compare_output(wf, case_dir: Path, workdir: Path, name: str, path: str, type_name: str, update: bool,
                    result: "CaseResult") -> OutputResult:
    how = wf.manifest.test.compare.get(name)
    actual = workdir / path
    expected = case_dir / "expected" / path
    if not actual.is_file():
        return OutputResult(name, path, "missing", "the run did not write it")
    if how is not None and how.exists:
        if actual.stat().st_size == 0:
            return OutputResult(name, path, "differs", "it exists but is empty")
        return OutputResult(name, path, "identical", "exists and is not empty (compared by existence only)")
    if update:
        expected.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(actual, expected)
        result.updated.append(path)
    if not expected.is_file():
        return OutputResult(name, path, "no expected file",
                            f"add {expected} (run `snakegate test {wf.id} --update` to write it)")
    tolerance = how.tolerance if how is not None and how.tolerance is not None else \
        wf.manifest.test.float_tolerance.get(name)
    status, detail = compare_output(actual.read_bytes(), expected.read_bytes(), type_name, tolerance,
                                    how.ignore_lines if how is not None else [])
    return OutputResult(name, path, status, detail)


def snakemake_options(profile: str | None) -> list[str]:
    """As `snakegate run` starts Snakemake: no workflow profile (profiles/default/ beside the Snakefile would
    otherwise be read unchecked), a profile only as checked; one core, no directory lock (a fresh folder)."""
    return ["--cores", "1", "--nolock", "--workflow-profile", "none", *(["--profile", profile] if profile else [])]


def hold_declarations(wf, workdir: Path, params: dict, registry_root: Path, outputs: dict | None = None
                      ) -> list[OutputResult]:
    """Each output's declaration (`columns`, `keys`, `when`) held against the files this run wrote: one result
    per declared output path (of `outputs`, every declared one by default), "as declared" or "not as
    declared" naming what differs."""
    def header_of(param: str) -> list[str] | None:
        return input_header(wf.schema, params, param, registry_root)

    out = []
    for name, decl in (wf.manifest.outputs if outputs is None else outputs).items():
        if decl.columns is None and decl.keys is None and decl.when is None:
            continue
        produced = produced_when(decl, params)
        try:
            paths = expand(decl.path, params, wf.schema)
        except (PatternError, OSError) as exc:
            if produced:
                continue  # the comparison above already failed on it
            out.append(OutputResult(name, decl.path, "not as declared", f"its path cannot be expanded: {exc}"))
            continue
        for path in paths:
            out.append(_hold(decl, name, path, workdir / path, produced, params, header_of))
    return out


def _hold(decl, name: str, path: str, actual: Path, produced: bool, params: dict, header_of) -> OutputResult:
    when = f"`when` {_shown(decl.when)}" if decl.when else ""
    if not produced:
        if actual.exists() or actual.is_symlink():
            return OutputResult(name, path, "not as declared", f"the run wrote it, but its {when} does not hold "
                                                               "for these params")
        return OutputResult(name, path, "as declared", f"not written, as its {when} says for these params")
    if not actual.is_file():
        return OutputResult(name, path, "not as declared", "the run did not write it"
                            + (f", though its {when} holds for these params" if when else ""))
    said = [f"written, as its {when} says"] if when else []
    if decl.columns is not None:
        declared = declared_columns(decl, params, header_of)
        if declared is None:
            of = getattr(decl.columns, "of", None)
            why = (f"the header of `{of}` is not a readable table here (a built-in dataset?)"
                   if of and header_of(of) is None else "a param it names holds something other than column names")
            return OutputResult(name, path, "not proven", f"its columns are not proven: {why}")
        from snakegate.contract import artifacts

        if not artifacts.is_table(decl.type):
            return OutputResult(name, path, "not as declared", f"it declares columns but is a {decl.type}, not a "
                                                               "table (`snakegate check` says the same)")
        header = artifacts.header(actual, decl.type)
        if header is None:
            return OutputResult(name, path, "not as declared", f"it is not a readable {decl.type} with a header row")
        problem = column_difference(declared, header)
        if problem:
            return OutputResult(name, path, "not as declared", f"columns: {problem}")
        said.append(f"{len(declared)} columns as declared")
    if decl.keys is not None:
        try:
            document = json.loads(actual.read_bytes())
        except (OSError, ValueError, RecursionError) as exc:  # a hostile output: say so, never crash
            return OutputResult(name, path, "not as declared", f"it is not JSON ({exc}), so no declared key resolves")
        unresolved = missing_keys(decl, document)
        if unresolved:
            return OutputResult(name, path, "not as declared", f"declared keys name nothing in the file: "
                                f"{', '.join(unresolved)} (of {len(decl.keys)} declared)")
        said.append(f"all {len(decl.keys)} declared keys resolve")
    return OutputResult(name, path, "as declared", "; ".join(said))


def judge_case(wf, case_dir: Path, workdir: Path, params: dict) -> list[OutputResult]:
    """The case's verdict from the outputs its run wrote, against test/<case>/verdict.yaml (or `pass` without
    it): one result, "as expected" or "not as expected" naming each check's status and value."""
    given = (case_dir / VERDICT_FILE).exists()
    if not wf.manifest.evaluate and not given:
        return []
    path = f"test/{case_dir.name}/{VERDICT_FILE}" if given else f"no test/{case_dir.name}/{VERDICT_FILE}: pass expected"
    expected, problem = read_expected_verdict(case_dir / VERDICT_FILE)
    if problem:
        return [OutputResult("verdict", path, "not as expected", problem)]
    from snakegate.contract.evaluate import verdict
    from snakegate.contract.output_files import OutputFile, reader

    files = {name: OutputFile(workdir / decl.path, decl.type) for name, decl in wf.manifest.outputs.items()}
    status, detail = compare_verdict(verdict(wf.manifest, params, reader(files)), expected)
    return [OutputResult("verdict", path, status, detail)]


def read_expected_verdict(path: Path) -> tuple[dict, str | None]:
    """({verdict, checks}, None) from a case's verdict.yaml ({verdict: pass} when there is none), or ({}, what
    is wrong with the file)."""
    from ruamel.yaml import YAML, YAMLError

    from snakegate.contract.evaluate import STATUSES

    if not path.exists():
        return {"verdict": "pass", "checks": {}}, None
    fix = f"write `verdict: {'|'.join(STATUSES)}` and optionally `checks: {{<check>: pass|fail|unknown}}`"
    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path.name} cannot be read ({type(exc).__name__}); {fix}"
    if not isinstance(data, dict) or set(data) - {"verdict", "checks"} or data.get("verdict") not in STATUSES:
        return {}, f"{path.name} is not a verdict; {fix}"
    checks = data.get("checks") or {}
    if not isinstance(checks, dict) or any(not isinstance(k, str) or v not in STATUSES for k, v in checks.items()):
        return {}, f"{path.name}: `checks` must map check names to {', '.join(STATUSES)}; {fix}"
    return {"verdict": data["verdict"], "checks": checks}, None


def compare_verdict(found: dict, expected: dict) -> tuple[Status, str]:
    """("as expected" | "not as expected", the verdict and each check as a person reads them) (pure)."""
    by_name = {c["name"]: c for c in found["checks"]}
    wrong = [] if found["status"] == expected["verdict"] else [f"expected {expected['verdict']}"]
    for name, status in expected["checks"].items():
        if name not in by_name:
            wrong.append(f"check `{name}` is not in workflow.yaml `evaluate:`")
        elif by_name[name]["status"] != status:
            wrong.append(f"expected {name} {status}")
    shown = "; ".join(_check_text(c) for c in found["checks"]) or "the workflow declares no checks"
    if wrong:
        return "not as expected", f"{found['status']} ({', '.join(wrong)}): {shown}"
    return "as expected", f"{found['status']}: {shown}"


def _check_text(check: dict) -> str:
    if check["status"] == "unknown":
        return f"{check['name']} unknown ({check.get('reason')})"
    return f"{check['name']} {check['status']} ({check['value']:.6g}; needs {check['test']} {check['threshold']:.6g})"


def _shown(when: dict) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in when.items()) + "}"


def input_header(schema: dict, params: dict, param: str, registry_root: Path) -> list[str] | None:
    """The header of the table x-artifact param `param` names in these params, read from the file (a
    relative path is the registry root's); None when it is no table or not a readable file."""
    from snakegate.contract import artifacts

    sub, through_list, _missing = param_schema(schema, param)
    kind = (sub or {}).get("x-artifact")
    value = param_value(params, param)
    if through_list or not isinstance(kind, str) or not artifacts.is_table(kind) or not isinstance(value, str):
        return None
    path = Path(value) if Path(value).is_absolute() else registry_root / value
    return artifacts.header(path, kind) if path.is_file() else None


def _input_folders(schema: dict, params: dict) -> list[Path]:
    """The folders holding the run's input files: where a workflow might write beside its inputs."""
    from snakegate.contract.dialect import iter_nodes

    folders = set()
    for node in iter_nodes(schema, params):
        if node.schema.get("x-artifact") and isinstance(node.value, str) and Path(node.value).is_absolute():
            folders.add(Path(node.value).parent)
    return sorted(folders)


def _snapshot(folders) -> dict:
    """{file: (size, mtime_ns)} of the files directly in `folders` (or of the files a snapshot names)."""
    if isinstance(folders, dict):
        folders = sorted({p.parent for p in folders})
    out = {}
    for folder in folders:
        for p in sorted(folder.iterdir()) if folder.is_dir() else []:
            if p.is_file():
                st = p.stat()
                out[p] = (st.st_size, st.st_mtime_ns)
    return out


def _restore(before: dict, after: dict) -> list[str]:
    """Files the run created or changed beside its inputs; created ones are removed again (the registry's
    data and the workflow's test/ folder stay as they were), changed ones are only reported."""
    found = []
    for path, stamp in sorted(after.items()):
        if path not in before:
            found.append(f"{path} (created; removed again)")
            path.unlink(missing_ok=True)
        elif before[path] != stamp:
            found.append(f"{path} (changed)")
    return found


def _job_logs(workdir: Path) -> str:
    """The tails of the jobs' own log files (logs/*.log), where scripts write their tracebacks."""
    parts = []
    for log in sorted((workdir / "logs").rglob("*.log")) if (workdir / "logs").is_dir() else []:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            parts.append(f"\n--- {log.relative_to(workdir)} ---\n{log_tail(text, 15)}")
    return "".join(parts)
