"""Plain data of `snakegate check`: the facts gathered about one workflow and the findings the proofs return.

`WorkflowFacts` is filled by `snakegate.check.gather` (the edge); every proof
module reads it and returns `Finding`s, never touching files. The helpers here
are pure functions over the contract (schema.json) shared by several proofs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from snakegate.check.reading import WorkflowSource
from snakegate.contract.dialect import is_builtin, iter_nodes
from snakegate.gate.dag import Dag
from snakegate.models import GateError

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    severity: Severity
    workflow: str
    code: str
    message: str
    hint: str | None = None
    rule: str | None = None
    file: str | None = None
    line: int | None = None

    def as_json(self) -> dict:
        return {"severity": self.severity, "workflow": self.workflow, "code": self.code, "rule": self.rule,
                "file": self.file, "line": self.line, "message": self.message, "hint": self.hint}


@dataclass
class ExampleFacts:
    """One examples/*.yaml: what the gate said and the DAG it gave."""

    name: str  # registry-relative path
    gate_errors: list[GateError] = field(default_factory=list)
    resolved_params: dict | None = None
    sheet_inputs: dict[str, str] = field(default_factory=dict)  # absolute path -> "param[row n].column"
    dag: Dag | None = None
    dag_error: tuple[str, str | None, int | None] | None = None  # (message, file, line)


@dataclass
class WorkflowFacts:
    """Everything the pure proofs need about one workflow folder, as plain data."""

    id: str
    folder: str  # absolute path of workflows/<id>
    rel: str  # registry-relative path of workflows/<id>
    root: str = ""  # absolute path of the registry root (paths in messages are shown relative to it)
    manifest: dict | None = None
    manifest_problems: list[str] = field(default_factory=list)
    schema: dict | None = None
    schema_problem: str | None = None
    has_snakefile: bool = True
    source: WorkflowSource | None = None
    syntax_error: tuple[str, str | None, int | None] | None = None  # (message, file, line)
    examples: list[ExampleFacts] = field(default_factory=list)
    examples_skipped: str | None = None  # why the examples were not gated
    lints: list[dict] = field(default_factory=list)  # {rule, file, line, title, body}
    format_diffs: list[dict] = field(default_factory=list)  # {file, line, changed, excerpt}
    missing_tools: list[dict] = field(default_factory=list)  # {name, install} of declared tools not on PATH
    missing_packages: list[dict] = field(default_factory=list)  # {name, module, install} declared, not importable
    unimportable: list[tuple[str, str, int | None]] = field(default_factory=list)  # undeclared imports not found here
    existing_files: set[str] = field(default_factory=set)  # registry-relative files of the workflow folder
    configfile_keys: dict[str, list[str]] = field(default_factory=dict)  # a `configfile:` it ships -> top keys
    preflight_source: str | None = None  # text of workflows/<id>/preflight.py, when it ships one
    preflight_file: str | None = None  # its registry-relative path
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (code, message) from gathering

    @property
    def trust(self) -> str:
        return (self.manifest or {}).get("trust", "community")

    @property
    def snakefile(self) -> str:
        return (self.source.snakefile if self.source and self.source.snakefile else f"{self.rel}/Snakefile")


# ----------------------------------------------------------------------------------------------
# pure helpers over the contract and paths


def properties(schema: Any) -> dict:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def is_open(schema: Any) -> bool:
    """Does this (sub)schema accept keys it does not list? A free-form mapping does;
    an object with listed properties and no additionalProperties is taken as closed."""
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    if t is not None and t != "object" and not (isinstance(t, list) and "object" in t):
        return False
    extra = schema.get("additionalProperties")
    if extra is False:
        return False
    if schema.get("patternProperties") or (extra is not None and extra is not False):
        return True
    return not properties(schema)


def declared_paths(schema: dict, prefix: tuple = ()) -> dict[tuple, dict]:
    """Every property path of the contract, nested objects included: path -> subschema."""
    out = {}
    for name, sub in properties(schema).items():
        out[prefix + (name,)] = sub
        out.update(declared_paths(sub, prefix + (name,)))
    return out


def undeclared_at(schema: dict, path: tuple) -> int | None:
    """Index of the first part of `path` the contract does not declare, or None when declared."""
    node = schema
    for i, part in enumerate(path):
        props = properties(node)
        if part in props:
            node = props[part]
        elif is_open(node) and i > 0:
            return None  # below a free-form mapping any key is allowed
        else:
            return i
    return None


def subschema(schema: dict, path: tuple) -> Any:
    node = schema
    for part in path:
        node = properties(node).get(part)
        if node is None:
            return None
    return node


def key_text(path: tuple) -> str:
    return "config" + "".join(f"[{p!r}]" for p in path)


def artifacts_of(schema: dict, params: dict) -> dict[str, tuple[str, str]]:
    """Normalised absolute file path -> (param path, artifact type) for every file-valued x-artifact."""
    out = {}
    for node in iter_nodes(schema, params):
        art = node.schema.get("x-artifact")
        if not art or node.is_key or not isinstance(node.value, str) or is_builtin(node):
            continue
        out[os.path.normpath(node.value)] = (node.path.removeprefix("params."), art)
    return out


def inside(path: str, folder: str) -> bool:
    p, d = os.path.normpath(path), os.path.normpath(folder)
    return p == d or p.startswith(d + os.sep)


def show(path: str, f: WorkflowFacts) -> str:
    """A file as a reader wants it: normalised, relative to the registry root when inside it."""
    norm = os.path.normpath(path)
    if f.root and inside(norm, f.root):
        return os.path.relpath(norm, f.root).replace(os.sep, "/")
    return norm


def name_of(named: dict[str, list[str]], file: str) -> str | None:
    for name, files in named.items():
        if file in files:
            return name
    return None


def rel_file(path: str | None, f: WorkflowFacts) -> str:
    if path and inside(path, f.folder):
        return f"{f.rel}/{os.path.relpath(path, f.folder)}".replace(os.sep, "/")
    return f.snakefile


def rule_line(f: WorkflowFacts, dag: Dag, rule: str) -> tuple[str, int | None]:
    """(file, Snakefile line) where `rule` is defined."""
    info = dag.rules.get(rule) or {}
    file = rel_file(info.get("snakefile"), f)
    return file, f.source.source_line(file, info.get("lineno")) if f.source else None


def checkpoints(dag: Dag) -> list[str]:
    """Checkpoint rules of a DAG: what comes after them is not in the DAG until they have run."""
    return sorted(name for name, info in dag.rules.items() if info.get("checkpoint"))


def positional_names(f: WorkflowFacts, job, kind: str) -> dict[str, str | None]:
    """Unnamed file of one job -> its positional name `_1`, `_2`, ... (the k-th unnamed argument of the rule's
    input:/output:), or None when the rule's positional arguments do not map one-to-one onto the files."""
    named = job.named_input if kind == "input" else job.named_output
    taken = {x for files in named.values() for x in files}
    files = [x for x in (job.input if kind == "input" else job.output) if x not in taken]
    rule = f.source.rule(job.rule) if f.source else None
    declared = (rule.unnamed_input if kind == "input" else rule.unnamed_output) if rule else len(files)
    if len(files) == declared or declared == 1:
        return {x: f"_{min(i, declared - 1) + 1}" for i, x in enumerate(files)}
    return {x: None for x in files}
