"""Build a workflow's Snakemake DAG through Snakemake's own Python API, without running a job.

Building a DAG executes the top level of the workflow's Snakefile (and whatever it imports), so
`build_dag` and `lint` never do it in the calling process: they hand the work to the sandbox
(`snakegate.gate.sandbox`: a worker without the user's secrets, network or unbounded time and
memory), where `build_here` / `lint_here` run. The result is plain data (`Dag` of `DagJob`s) that
the gate and the static check reason about. Snakemake works in a fresh temporary folder so the DAG
is the full one (nothing up to date) and nothing is written next to the workflow. Any failure to
load or build, in Snakemake or in the sandbox (time, memory, a crash), becomes a `DagError` with
the reason: a crash here fails the gate, it never passes it.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.gate import sandbox
from snakegate.provenance.hashing import canonical_json, sha256_text

# Snakemake's API changes the working directory and keeps global logger state:
# one build at a time per process.
_lock = threading.Lock()
_cache: dict[str, "Dag"] = {}
_CACHE_MAX = 256


class DagError(Exception):
    def __init__(self, message: str, line: int | None = None, file: str | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.file = file


@dataclass
class DagJob:
    rule: str
    input: list[str]
    output: list[str]
    named_input: dict[str, list[str]]
    named_output: dict[str, list[str]]
    params: dict[str, Any]
    log: list[str]
    # producer rule name for each input file made by another job
    producers: dict[str, str] = field(default_factory=dict)


@dataclass
class Dag:
    jobs: list[DagJob]
    rules: dict[str, dict]  # rule name -> {"input": [names], "output": [names], "has_output": bool}

    def produced(self) -> set[str]:
        return {f for j in self.jobs for f in j.output}

    def consumed(self) -> set[str]:
        return {f for j in self.jobs for f in j.input}


def _path(file) -> str:
    """A job's file as the workflow names it. `workflow.source_path("x")` hands a job a copy in Snakemake's
    per-process source cache (a fresh temporary folder each time); its original path is the workflow's file."""
    orig = getattr(file, "flags", {}).get("sourcecache_entry")
    return str(orig) if isinstance(orig, (str, os.PathLike)) else str(file)


def _named(namedlist) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, (start, end) in namedlist._names.items():
        items = namedlist[start:end] if end is not None else [namedlist[start]]
        out[name] = [_path(i) for i in items]
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN from a sample sheet's empty cell: JSON has no NaN, the sandbox's answer must parse
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _params(namedlist) -> dict[str, Any]:
    out = {}
    for name, (start, end) in namedlist._names.items():
        out[name] = _plain(namedlist[start:end] if end is not None else namedlist[start])
    return out


def _line_of(exc: BaseException) -> tuple[int | None, str | None]:
    lineno = getattr(exc, "lineno", None)
    filename = getattr(exc, "filename", None) or getattr(exc, "snakefile", None)
    return (lineno if isinstance(lineno, int) else None), (str(filename) if filename else None)


def _message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    # Snakemake wraps the real cause; its first lines say what went wrong.
    lines = [l for l in text.splitlines() if l.strip()]
    return " ".join(lines[:6])


def build_dag(snakefile: Path, config: dict, use_cache: bool = True) -> Dag:
    """The DAG of `snakefile` for `config`, built in the sandbox; raises DagError with Snakemake's reason.

    Built DAGs are kept in this process (plain data, keyed on the workflow folder's files and the config),
    so a warm gate does not ask the sandbox again."""
    key = sha256_text(canonical_json([str(snakefile), _snakefile_stamp(snakefile), config]))
    if use_cache and key in _cache:
        return _cache[key]
    answer = _sandboxed("dag", snakefile, config)
    if answer.get("status") == "error":
        raise DagError(str(answer.get("message")), line=answer.get("line"), file=answer.get("file"))
    dag = _from_plain(answer["dag"])
    if len(_cache) >= _CACHE_MAX:
        _cache.pop(next(iter(_cache)))
    _cache[key] = dag
    return dag


def lint(snakefile: Path, config: dict) -> dict:
    """Snakemake's JSON lint report for `snakefile` loaded with `config`, made in the sandbox; DagError when
    the linter could not run."""
    return _sandboxed("lint", snakefile, config).get("report") or {}


def _sandboxed(kind: str, snakefile: Path, config: dict) -> dict:
    limits = sandbox.SNAKEMAKE_LIMITS
    try:
        answer = sandbox.call(kind, {"snakefile": str(Path(snakefile).resolve()), "config": config}, limits)
    except sandbox.SandboxError as exc:
        raise DagError(f"the workflow's code was stopped in the sandbox: {sandbox.describe(exc, limits)}") from None
    if not isinstance(answer, dict):
        raise DagError("the sandbox gave no answer about the workflow's jobs")
    return answer


def _from_plain(data: dict) -> Dag:
    return Dag(jobs=[DagJob(**job) for job in data["jobs"]], rules=data["rules"])


def build_here(snakefile: Path, config: dict) -> Dag:
    """The DAG built in this very process: only the sandbox's child calls this (it runs the workflow's code)."""
    with _lock:
        return _build(snakefile, config)


def _snakefile_stamp(snakefile: Path) -> list:
    """Changes when any file of the workflow folder changes (Snakefile, included .smk, scripts)."""
    stamp = []
    for dirpath, dirnames, filenames in os.walk(snakefile.parent):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".snakemake", "test", "examples"))
        for name in sorted(filenames):
            st = os.stat(os.path.join(dirpath, name))
            stamp.append([os.path.join(dirpath, name), st.st_size, st.st_mtime_ns])
    return stamp


def config_settings(config: dict, workdir: Path):
    """Snakemake's config settings for `config`, given as a config file too: a workflow's own `configfile:`
    directive is then skipped when its file is absent (as on every snakegate path) instead of failing."""
    from snakemake.settings.types import ConfigSettings

    params = workdir / ".snakegate-params.json"
    params.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML: Snakemake's loader reads it
    return ConfigSettings(config=config, configfiles=[params])


def _build(snakefile: Path, config: dict) -> Dag:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings, OutputSettings, Quietness, ResourceSettings, DAGSettings, ExecutionSettings,
    )

    cwd = os.getcwd()
    sink = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="snakegate-dag-") as workdir:
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), _quiet_logging():
                with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, keep_logger=False)) as api:
                    wapi = api.workflow(
                        resource_settings=ResourceSettings(cores=1),
                        config_settings=config_settings(config, Path(workdir)),
                        snakefile=Path(snakefile).resolve(),
                        workdir=Path(workdir),
                    )
                    wapi.dag(DAGSettings(forceall=True))
                    workflow = wapi._workflow
                    # the DAG reads execution settings (e.g. on ambiguous rules); default ones, as `snakemake -n`
                    workflow.execution_settings = workflow.execution_settings or ExecutionSettings()
                    workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
                    workflow._build_dag()
                    return _extract(workflow)
        except DagError:
            raise
        except BaseException as exc:  # noqa: BLE001 - fail closed: any crash is a DAG error
            if isinstance(exc, (KeyboardInterrupt, MemoryError)):
                raise  # the sandbox reports a memory limit as such, not as a DAG error
            line, file = _line_of(exc)
            detail = _message(exc)
            if isinstance(exc, SystemExit) or detail in ("", "1"):
                detail = " ".join(sink.getvalue().split()[-60:]) or "Snakemake could not build the DAG"
            raise DagError(detail, line=line, file=file) from None
        finally:
            os.chdir(cwd)


@contextlib.contextmanager
def _quiet_logging():
    log = logging.getLogger("snakemake")
    old_level, old_propagate = log.level, log.propagate
    log.setLevel(logging.CRITICAL + 1)
    log.propagate = False
    try:
        yield
    finally:
        log.setLevel(old_level)
        log.propagate = old_propagate


def _extract(workflow) -> Dag:
    dag = workflow.dag
    jobs = list(dag.jobs)
    out: list[DagJob] = []
    for job in sorted(jobs, key=lambda j: (j.rule.name, [str(f) for f in j.output])):
        producers = {}
        for dep, files in dag.dependencies[job].items():
            for f in files:
                producers[_path(f)] = dep.rule.name
        out.append(DagJob(
            rule=job.rule.name,
            input=[_path(f) for f in job.input],
            output=[str(f) for f in job.output],
            named_input=_named(job.input),
            named_output=_named(job.output),
            params=_params(job.params),
            log=[str(f) for f in job.log],
            producers=producers,
        ))
    rules = {}
    for rule in workflow.rules:
        rules[rule.name] = {
            "input": list(rule.input._names.keys()),
            "output": list(rule.output._names.keys()),
            "has_output": bool(rule.output),
            "lineno": getattr(rule, "lineno", None),
            "checkpoint": bool(getattr(rule, "is_checkpoint", False)),
            "snakefile": str(getattr(rule, "snakefile", "") or ""),
        }
    return Dag(jobs=out, rules=rules)


@contextlib.contextmanager
def _snakefile_lints_as_paths():
    """Snakemake's JSON lint report names a Snakefile by its source object, which `json` cannot write: every
    Snakefile-level lint (a path built with `+`, an absolute path, rules mixed with functions) then crashes
    `snakemake --lint json` with "LocalSourceFile is not JSON serializable". For one lint, name it by its path."""
    from snakemake.linting.snakefiles import SnakefileLinter

    original = SnakefileLinter.item_desc_json

    def by_path(self, snakefile):
        path = snakefile.get_path_or_uri(secret_free=True) if hasattr(snakefile, "get_path_or_uri") else snakefile
        return {"snakefile": str(path)}

    SnakefileLinter.item_desc_json = by_path
    try:
        yield
    finally:
        SnakefileLinter.item_desc_json = original


def lint_here(snakefile: Path, config: dict) -> dict:
    """Snakemake's linter in this very process: only the sandbox's child calls this (it runs the workflow's code)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, Quietness, ResourceSettings

    sink = io.StringIO()
    cwd = os.getcwd()
    # Snakemake's API changes the working directory and keeps global state: one at a time, like a build.
    with _lock, tempfile.TemporaryDirectory(prefix="snakegate-lint-") as workdir:
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()), _quiet_logging(), \
                    _snakefile_lints_as_paths():
                with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, keep_logger=False)) as api:
                    wapi = api.workflow(resource_settings=ResourceSettings(cores=1),
                                        config_settings=config_settings(config, Path(workdir)),
                                        snakefile=snakefile.resolve(), workdir=Path(workdir))
                    wapi.lint(json=True)
        finally:
            os.chdir(cwd)
    text = sink.getvalue()
    start = text.find("{")
    return json.loads(text[start:]) if start >= 0 else {}
