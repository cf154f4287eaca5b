"""The static contract check of a registry workflow (`snakegate check`): findings, never a run.

Two halves, kept apart:
- `gather()` (snakegate.checkgather) is the edge. It reads workflow.yaml, schema.json and the
  Snakefile (config keys via `snakegate.configkeys`), gates every example,
  builds each example's DAG with Snakemake's API, lints the workflow and asks
  snakefmt for differences. It turns everything into plain data
  (`WorkflowFacts`); a crash while gathering is recorded there, not raised.
- The `*_findings(facts)` functions are pure: facts in, `Finding`s out.
  `run_checks()` calls each one and turns a crash inside a check into an
  error finding (fail closed: a check that cannot run never says "no findings").
No job runs and nothing is written next to the workflow.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Callable, Literal

from snakegate.configkeys import ConfigScan
from snakegate.contract import contract_problems, did_you_mean, format_path, is_builtin, iter_nodes
from snakegate.dag import Dag
from snakegate.models import GateError

Severity = Literal["error", "warning"]
CODES = (
    "manifest_invalid", "schema_invalid", "default_invalid", "undeclared_config_key", "unused_param",
    "dynamic_config_access", "artifact_not_consumed", "output_not_produced", "hidden_input", "rule_not_declared",
    "io_name_unknown", "edge_type_mismatch", "example_invalid", "dag_error", "lint", "format", "tool_missing",
    "config_not_validated",
)
# Lints that do not apply to this registry: its workflows run inside snakegate's own
# environment (their scientific libraries are snakegate dependencies), not per-rule conda envs.
IGNORED_LINTS = ("Specify a conda environment or container for each rule.",)


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
    dag: Dag | None = None
    dag_error: tuple[str, str | None, int | None] | None = None  # (message, file, line)


@dataclass
class WorkflowFacts:
    """Everything the pure checks need about one workflow folder, as plain data."""

    id: str
    folder: str  # absolute path of workflows/<id>
    rel: str  # registry-relative path of workflows/<id>
    root: str = ""  # absolute path of the registry root (paths in messages are shown relative to it)
    manifest: dict | None = None
    manifest_problems: list[str] = field(default_factory=list)
    schema: dict | None = None
    schema_problem: str | None = None
    has_snakefile: bool = True
    scan: ConfigScan | None = None
    syntax_error: tuple[str, str | None, int | None] | None = None  # (message, file, line)
    examples: list[ExampleFacts] = field(default_factory=list)
    examples_skipped: str | None = None  # why the examples were not gated
    lints: list[dict] = field(default_factory=list)  # {rule, file, line, title, body}
    format_diffs: list[dict] = field(default_factory=list)  # {file, line, changed, excerpt}
    missing_tools: list[dict] = field(default_factory=list)  # {name, install} of declared tools not on PATH
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (code, message) from gathering


# ----------------------------------------------------------------------------------------------
# pure helpers over the contract


def _properties(schema: Any) -> dict:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _is_open(schema: Any) -> bool:
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
    return not _properties(schema)


def declared_paths(schema: dict, prefix: tuple = ()) -> dict[tuple, dict]:
    """Every property path of the contract, nested objects included: path -> subschema."""
    out = {}
    for name, sub in _properties(schema).items():
        out[prefix + (name,)] = sub
        out.update(declared_paths(sub, prefix + (name,)))
    return out


def _undeclared_at(schema: dict, path: tuple) -> int | None:
    """Index of the first part of `path` the contract does not declare, or None when declared."""
    node = schema
    for i, part in enumerate(path):
        props = _properties(node)
        if part in props:
            node = props[part]
        elif _is_open(node) and i > 0:
            return None  # below a free-form mapping any key is allowed
        else:
            return i
    return None


def _subschema(schema: dict, path: tuple) -> Any:
    node = schema
    for part in path:
        node = _properties(node).get(part)
        if node is None:
            return None
    return node


def _key_text(path: tuple) -> str:
    return "config" + "".join(f"[{p!r}]" for p in path)


# ----------------------------------------------------------------------------------------------
# pure checks: facts -> findings


def contract_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    manifest_file = f"{f.rel}/workflow.yaml"
    for problem in f.manifest_problems:
        out.append(Finding("error", f.id, "manifest_invalid", problem, file=manifest_file,
                           hint="fix workflow.yaml to match schemas/workflow.schema.json (see workflows/CONTRIBUTING.md)"))
    schema_file = f"{f.rel}/schema.json"
    if f.schema_problem:
        out.append(Finding("error", f.id, "schema_invalid", f.schema_problem, file=schema_file,
                           hint="every workflow needs a schema.json JSON Schema 2020-12 parameter contract"))
    elif f.schema is not None:
        for code, sentence in contract_problems(f.schema):
            hint = ("make the default satisfy its own type, range or enum, or drop it" if code == "default_invalid"
                    else "see schemas/contract.schema.json and workflows/CONTRIBUTING.md")
            out.append(Finding("error", f.id, code, sentence, file=schema_file, hint=hint))
    for code, message in f.crashes:
        out.append(Finding("error", f.id, code, message,
                           hint="this is a crash inside snakegate check; the workflow cannot be proven until it is fixed"))
    return out


def config_key_findings(f: WorkflowFacts) -> list[Finding]:
    if f.syntax_error is not None:
        message, file, line = f.syntax_error
        return [Finding("error", f.id, "dag_error", f"the Snakefile does not parse: {message}", file=file, line=line,
                        hint="fix the syntax on that line; `snakemake -s <Snakefile> -n` shows the same error")]
    if not f.has_snakefile:
        return [Finding("error", f.id, "dag_error", f"{f.rel}/Snakefile is missing", file=f"{f.rel}/Snakefile",
                        hint="every workflow folder needs a Snakefile that runs alone with plain Snakemake")]
    if f.scan is None or f.schema is None:
        return []
    schema, scan = f.schema, f.scan
    out: list[Finding] = validation_findings(f)
    for file, line, message in scan.unfollowed:
        out.append(Finding("warning", f.id, "dynamic_config_access", message + "; its config reads are not checked",
                           file=file, line=line, hint="include files with a literal relative path"))
    reported = set()
    for read in sorted(scan.reads, key=lambda r: (r.file, r.line or 0, r.path)):
        bad = _undeclared_at(schema, read.path)
        if bad is None:
            continue
        key = read.path[: bad + 1]
        if (key, read.file, read.line) in reported:
            continue
        reported.add((key, read.file, read.line))
        siblings = list(_properties(_subschema(schema, read.path[:bad]) or {}))
        close = did_you_mean(read.path[bad], siblings)
        where = f"in rule `{read.rule}`" if read.rule else "outside any rule"
        out.append(Finding(
            "error", f.id, "undeclared_config_key",
            f"{_key_text(read.path)} is read {where} but schema.json declares no `{format_path(key)}`",
            rule=read.rule, file=read.file, line=read.line,
            hint=(f"did you mean `{close}`? " if close else "")
            + f"declare `{format_path(key)}` in schema.json (type, description, default) or stop reading it"))

    declared = declared_paths(schema)
    read_paths = {r.path for r in scan.reads}
    maybe_prefixes = [d.prefix for d in scan.dynamic]

    def is_read(path: tuple) -> bool:
        # reading a key reads its parents; reading a whole mapping reads every key below it;
        # a dynamic access below `path` (config["a"][var]) reads `path` itself
        return (any(r[: len(path)] == path or path[: len(r)] == r for r in read_paths)
                or any(p[: len(path)] == path for p in maybe_prefixes))

    def maybe_read(path: tuple) -> bool:
        return any(path[: len(p)] == p and len(path) > len(p) for p in maybe_prefixes)

    unused = [p for p in declared if not is_read(p)]
    for path in sorted(unused):
        if any(path[: len(q)] == q for q in unused if len(q) < len(path)):
            continue  # its parent is already reported
        name = format_path(path)
        if maybe_read(path):
            out.append(Finding("warning", f.id, "unused_param",
                               f"param `{name}` is never read by a literal key; it may be read by a dynamic config access",
                               file=f"{f.rel}/schema.json",
                               hint=f"read it as config[{path[-1]!r}] so the check can prove it is used"))
        else:
            out.append(Finding("error", f.id, "unused_param",
                               f"param `{name}` is declared in schema.json but no rule or function reads it",
                               file=f"{f.rel}/schema.json",
                               hint=f"pass it to the rule that needs it (params: {path[-1]}=config[{path[-1]!r}]; "
                                    "scripts get values through params:, never snakemake.config) "
                                    "or remove it from schema.json"))

    for d in sorted(scan.dynamic, key=lambda d: (d.file, d.line or 0)):
        parent = _subschema(schema, d.prefix) if d.prefix else schema
        if d.prefix and _is_open(parent):
            continue  # a free-form mapping: any key is declared
        where = f"in rule `{d.rule}`" if d.rule else "outside any rule"
        what = "uses the whole config" if d.whole else "reads a key that cannot be resolved statically"
        out.append(Finding("warning", f.id, "dynamic_config_access",
                           f"`{d.text}` {where} {what}, so snakegate cannot prove the key is declared",
                           rule=d.rule, file=d.file, line=d.line,
                           hint="read each param by a literal key (config[\"name\"]), or declare "
                                + (f"`{format_path(d.prefix)}` as a free-form mapping (additionalProperties)"
                                   if d.prefix else "the values in a mapping param")))
    return out


def validation_findings(f: WorkflowFacts) -> list[Finding]:
    """The Snakefile validates its own config against schema.json with Snakemake's validate(),
    so a standalone run (snakemake -s workflows/<id>/Snakefile) stops on bad params before any job."""
    if f.scan is None:
        return []
    wanted = os.path.join(f.folder, "schema.json")
    for file, _line, schema in f.scan.validations:
        if schema is None:
            continue
        base = os.path.dirname(os.path.join(f.root, file) if f.root else file)
        if os.path.normpath(os.path.join(base, schema)) == os.path.normpath(wanted):
            return []
    named = [s for _, _, s in f.scan.validations]
    what = (f"validates its config against {', '.join(repr(s) for s in named)}, not against the workflow's schema.json"
            if named else "does not validate its config")
    return [Finding("error", f.id, "config_not_validated", f"the Snakefile {what}, so a standalone run "
                    f"(snakemake -s {f.rel}/Snakefile) accepts any params and fails inside a job, or runs with wrong ones",
                    file=f"{f.rel}/Snakefile", line=1,
                    hint='add `from snakemake.utils import validate` and `validate(config, "schema.json")` near the '
                         "top of the Snakefile (the path is relative to the file that calls it)")]


def example_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    if f.examples_skipped:
        out.append(Finding("error", f.id, "example_invalid", f.examples_skipped, file=f"{f.rel}/examples",
                           hint="fix the manifest and contract first; then every example is gated and its DAG built"))
        return out
    if not f.examples and f.manifest is not None and not f.manifest_problems:
        out.append(Finding("error", f.id, "example_invalid", "no examples/*.yaml: the rule IO checks need at least one",
                           file=f"{f.rel}/examples",
                           hint="add examples/<name>.yaml (a run config: workflow, params) using data under data/examples/"))
    for ex in f.examples:
        for err in ex.gate_errors:
            out.append(Finding("error", f.id, "example_invalid", f"{PurePosixPath(ex.name).name}: {err.path or '(file)'} "
                               f"[{err.code}]: {err.message}", file=ex.name,
                               hint=err.hint or "make the example pass `snakegate validate`"))
        if ex.dag_error is not None:
            message, file, line = ex.dag_error
            missing = _missing_input(message)
            if missing:
                rule, files = missing
                out.append(Finding("error", f.id, "hidden_input",
                                   f"{PurePosixPath(ex.name).name}: rule `{rule}` reads {', '.join(files)}, which no job "
                                   "produces and no x-artifact param names (a hidden input)", rule=rule, file=ex.name,
                                   hint=_HIDDEN_HINT))
                continue
            key = _key_error(message)
            if key is not None:
                if f.scan and f.schema is not None and any(
                        r.path[0] == key and _undeclared_at(f.schema, r.path) is not None for r in f.scan.reads):
                    continue  # the cause is an undeclared config key, reported by config_key_findings
                message = (f"KeyError {key!r}: the Snakefile reads a config key that these params do not contain "
                           "(is it optional without a default? use config.get or give it a default in schema.json)")
            out.append(Finding("error", f.id, "dag_error",
                               f"{PurePosixPath(ex.name).name}: Snakemake cannot build the DAG: {message}",
                               file=file or ex.name, line=line,
                               hint="fix the rules so `snakemake -n` works for this example (cycles, ambiguous "
                                    "outputs and missing inputs are the usual causes)"))
    return out


_HIDDEN_HINT = ("give the file through an x-artifact param in schema.json and name it in the rule's input: "
                "(e.g. input: table=config[\"table_file\"]), or produce it with another rule")


def _key_error(message: str) -> str | None:
    """The key when a DAG error is a bare KeyError message such as 'threshold' (pure)."""
    text = message.strip()
    if len(text) >= 3 and text[0] == text[-1] and text[0] in "'\"" and " " not in text:
        return text[1:-1]
    return None


def _missing_input(message: str) -> tuple[str, list[str]] | None:
    """(rule, files) when a DAG error is Snakemake's 'Missing input files for rule X' (pure)."""
    marker = "Missing input files for rule "
    if marker not in message:
        return None
    rest = message.split(marker, 1)[1]
    rule = rest.split(":", 1)[0].strip()
    files = []
    if "affected files:" in rest:
        files = [w for w in rest.split("affected files:", 1)[1].split() if w]
    return rule, files or ["a file"]


def _artifacts(schema: dict, params: dict) -> dict[str, tuple[str, str]]:
    """Normalised absolute file path -> (param path, artifact type) for every file-valued x-artifact."""
    out = {}
    for node in iter_nodes(schema, params):
        art = node.schema.get("x-artifact")
        if not art or node.is_key or not isinstance(node.value, str) or is_builtin(node):
            continue
        out[os.path.normpath(node.value)] = (node.path.removeprefix("params."), art)
    return out


def _inside(path: str, folder: str) -> bool:
    p, d = os.path.normpath(path), os.path.normpath(folder)
    return p == d or p.startswith(d + os.sep)


def _show(path: str, f: WorkflowFacts) -> str:
    """A file as a reader wants it: normalised, relative to the registry root when inside it."""
    norm = os.path.normpath(path)
    if f.root and _inside(norm, f.root):
        return os.path.relpath(norm, f.root).replace(os.sep, "/")
    return norm


def _rule_line(f: WorkflowFacts, dag: Dag, rule: str) -> tuple[str, int | None]:
    """(file, Snakefile line) where `rule` is defined."""
    info = dag.rules.get(rule) or {}
    file = _rel_file(info.get("snakefile"), f)
    return file, f.scan.source_line(file, info.get("lineno")) if f.scan else None


def _name_of(named: dict[str, list[str]], file: str) -> str | None:
    for name, files in named.items():
        if file in files:
            return name
    return None


def io_findings(f: WorkflowFacts) -> list[Finding]:
    """Per example DAG: artifacts consumed, declared outputs produced, no hidden inputs."""
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    out = []
    for ex in f.examples:
        if ex.dag is None or ex.resolved_params is None:
            continue
        label = PurePosixPath(ex.name).name
        arts = _artifacts(f.schema, ex.resolved_params)
        consumed = {os.path.normpath(x) for x in ex.dag.consumed()}
        produced = {os.path.normpath(x) for x in ex.dag.produced()}
        for path, (param, _type) in sorted(arts.items(), key=lambda kv: kv[1]):
            if path not in consumed:
                top = param.split(".")[0].split("[")[0]
                readers = sorted({r.rule for r in (f.scan.reads if f.scan else []) if r.path[0] == top and r.rule})
                how = f"; rule `{readers[0]}` reads it from config but not as an input" if readers else ""
                where, line = _rule_line(f, ex.dag, readers[0]) if readers else (f"{f.rel}/Snakefile", None)
                out.append(Finding("error", f.id, "artifact_not_consumed",
                                   f"x-artifact param `{param}` is not an input of any job{how} (with {label})",
                                   rule=readers[0] if readers else None, file=where, line=line,
                                   hint=f"name it in the input: of the rule that reads it (input: "
                                        f"{top}=config[{top!r}]), so Snakemake tracks the file and reruns the rule "
                                        "when it changes"))
        for name, decl in sorted((f.manifest.get("outputs") or {}).items()):
            if os.path.normpath(decl["path"]) not in produced:
                out.append(Finding("error", f.id, "output_not_produced",
                                   f"declared output `{name}` ({decl['path']}) is not produced by any job (with {label})",
                                   file=f"{f.rel}/workflow.yaml",
                                   hint=f"make a rule write {decl['path']} and request it from the first rule (rule all), "
                                        f"or correct outputs.{name}.path in workflow.yaml"))
        for job in ex.dag.jobs:
            for file in job.input:
                norm = os.path.normpath(file)
                if file in job.producers or norm in arts or _inside(norm, f.folder):
                    continue  # made upstream, given by a param, or shipped in the (hashed) workflow folder
                where, line = _rule_line(f, ex.dag, job.rule)
                out.append(Finding("error", f.id, "hidden_input",
                                   f"rule `{job.rule}` reads {_show(file, f)}, which no job produces and no x-artifact "
                                   f"param names (a hidden input, with {label})", rule=job.rule,
                                   file=where, line=line, hint=_HIDDEN_HINT))
    return out


def rule_findings(f: WorkflowFacts) -> list[Finding]:
    """Every rule with outputs is declared, and every declared IO name exists on its rule."""
    dags = [ex.dag for ex in f.examples if ex.dag is not None]
    if f.manifest is None or f.manifest_problems or not dags:
        return []
    declared = f.manifest.get("rules") or {}
    rules = dags[0].rules
    manifest_file = f"{f.rel}/workflow.yaml"
    out = []
    for name, info in sorted(rules.items()):
        has_output = info.get("has_output") or any(j.output for d in dags for j in d.jobs if j.rule == name)
        if has_output and name not in declared:
            file = _rel_file(info.get("snakefile"), f)
            line = f.scan.source_line(file, info.get("lineno")) if f.scan else None
            out.append(Finding("error", f.id, "rule_not_declared",
                               f"rule `{name}` has outputs but is not declared under `rules:` in workflow.yaml",
                               rule=name, file=file, line=line,
                               hint=f"add `{name}: {{input: {{<name>: <type>}}, output: {{<name>: <type>}}}}` "
                                    "to rules: in workflow.yaml"))
    for name, io in sorted(declared.items()):
        if name not in rules:
            close = did_you_mean(name, list(rules))
            out.append(Finding("error", f.id, "io_name_unknown",
                               f"workflow.yaml declares rule `{name}`, which the Snakefile does not define",
                               rule=name, file=manifest_file,
                               hint=f"did you mean `{close}`?" if close else "remove it or rename it to a rule of the Snakefile"))
            continue
        for kind in ("input", "output"):
            known = set(rules[name].get(kind) or [])
            for d in dags:  # names made by unpack() or input functions exist only per job
                for job in d.jobs:
                    if job.rule == name:
                        known.update((job.named_input if kind == "input" else job.named_output).keys())
            for io_name in sorted((io or {}).get(kind) or {}):
                if io_name not in known:
                    close = did_you_mean(io_name, sorted(known))
                    out.append(Finding("error", f.id, "io_name_unknown",
                                       f"workflow.yaml declares {kind} `{io_name}` of rule `{name}`, but the rule "
                                       f"has no {kind} named `{io_name}` (it has: {', '.join(sorted(known)) or 'none'})",
                                       rule=name, file=manifest_file,
                                       hint=(f"did you mean `{close}`? " if close else "")
                                       + f"name the {kind} in the Snakefile ({kind}: {io_name}=...) or fix workflow.yaml"))
    return out


def _rel_file(path: str | None, f: WorkflowFacts) -> str:
    if path and _inside(path, f.folder):
        return f"{f.rel}/{os.path.relpath(path, f.folder)}".replace(os.sep, "/")
    return f"{f.rel}/Snakefile"


def edge_findings(f: WorkflowFacts) -> list[Finding]:
    """On every DAG edge (job -> job, artifact param -> job, job -> declared output) the types agree."""
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    declared = f.manifest.get("rules") or {}
    manifest_file = f"{f.rel}/workflow.yaml"
    out = []

    def untyped(rule, kind, name, file, detail):
        if name is None:
            return Finding("error", f.id, "io_name_unknown",
                           f"rule `{rule}` {'reads' if kind == 'input' else 'writes'} {_show(file, f)} {detail} through an "
                           f"unnamed {kind}, so the edge has no declared type", rule=rule, file=f"{f.rel}/Snakefile",
                           hint=f"name the {kind} ({kind}: <name>=...) and give <name> a type under "
                                f"rules.{rule}.{kind} in workflow.yaml")
        return Finding("error", f.id, "io_name_unknown",
                       f"{kind} `{name}` of rule `{rule}` ({_show(file, f)} {detail}) has no type in workflow.yaml",
                       rule=rule, file=manifest_file, hint=f"add `{name}: <type>` under rules.{rule}.{kind}")

    for ex in f.examples:
        if ex.dag is None or ex.resolved_params is None:
            continue
        arts = _artifacts(f.schema, ex.resolved_params)
        by_output: dict[str, tuple[str, str | None]] = {}
        for job in ex.dag.jobs:
            for file in job.output:
                by_output[file] = (job.rule, _name_of(job.named_output, file))
        for job in ex.dag.jobs:
            if not job.output or job.rule not in declared:
                continue  # target rules carry no types; undeclared rules are reported by rule_findings
            in_types = (declared[job.rule] or {}).get("input") or {}
            for file in job.input:
                norm = os.path.normpath(file)
                if file in job.producers:
                    producer = job.producers[file]
                    if producer not in declared:
                        continue
                    _, out_name = by_output.get(file, (producer, None))
                    out_types = (declared[producer] or {}).get("output") or {}
                    source = f"from rule `{producer}`"
                    if out_name is None or out_name not in out_types:
                        out.append(untyped(producer, "output", out_name, file, "for rule `" + job.rule + "`"))
                        continue
                    source_type, source_text = out_types[out_name], f"output `{out_name}` of rule `{producer}`"
                elif norm in arts:
                    param, source_type = arts[norm]
                    source, source_text = f"from param `{param}`", f"x-artifact param `{param}`"
                else:
                    continue  # a hidden input, reported by io_findings
                in_name = _name_of(job.named_input, file)
                if in_name is None or in_name not in in_types:
                    out.append(untyped(job.rule, "input", in_name, file, source))
                    continue
                if in_types[in_name] != source_type:
                    out.append(Finding("error", f.id, "edge_type_mismatch",
                                       f"{source_text} is {source_type} but input `{in_name}` of rule `{job.rule}` "
                                       f"that reads it ({_show(file, f)}) is declared {in_types[in_name]}",
                                       rule=job.rule, file=manifest_file,
                                       hint="make both ends of the edge the same artifact type in workflow.yaml "
                                            "(and schema.json x-artifact), or convert the file in a rule between them"))
        for name, decl in sorted((f.manifest.get("outputs") or {}).items()):
            hit = by_output.get(decl["path"]) or by_output.get(os.path.normpath(decl["path"]))
            if hit is None or hit[0] not in declared:
                continue
            rule, out_name = hit
            out_types = (declared[rule] or {}).get("output") or {}
            if out_name is None or out_name not in out_types:
                out.append(untyped(rule, "output", out_name, decl["path"], f"(declared output `{name}`)"))
            elif out_types[out_name] != decl["type"]:
                out.append(Finding("error", f.id, "edge_type_mismatch",
                                   f"declared output `{name}` is {decl['type']} but rule `{rule}` writes it as output "
                                   f"`{out_name}` declared {out_types[out_name]}", rule=rule, file=manifest_file,
                                   hint=f"make outputs.{name}.type and rules.{rule}.output.{out_name} the same type"))
    return out


def hygiene_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    for lint in f.lints:
        out.append(Finding("warning", f.id, "lint", f"{lint['title']} {lint.get('body') or ''}".strip(),
                           rule=lint.get("rule"), file=lint.get("file"), line=lint.get("line"),
                           hint="see `snakemake --lint` and https://snakemake.readthedocs.io/en/stable/snakefiles/best_practices.html"))
    for diff in f.format_diffs:
        out.append(Finding("warning", f.id, "format",
                           f"{diff['file']} is not formatted as snakefmt formats it ({diff['changed']} line(s) differ"
                           + (f", first: {diff['excerpt']}" if diff.get("excerpt") else "") + ")",
                           file=diff["file"], line=diff.get("line"), hint=f"run `snakefmt {diff['file']}`"))
    for tool in f.missing_tools:
        out.append(Finding("warning", f.id, "tool_missing",
                           f"declared tool `{tool['name']}` is not on PATH here, so this workflow cannot be run or "
                           "tested on this machine",
                           file=f"{f.rel}/workflow.yaml",
                           hint=f"install it: `{tool['install']}` (or load its module) before `snakegate test {f.id}`"))
    return out


CHECKS: list[tuple[Callable[[WorkflowFacts], list[Finding]], str]] = [
    (contract_findings, "schema_invalid"),
    (config_key_findings, "undeclared_config_key"),
    (example_findings, "example_invalid"),
    (io_findings, "hidden_input"),
    (rule_findings, "rule_not_declared"),
    (edge_findings, "edge_type_mismatch"),
    (hygiene_findings, "lint"),
]


def run_checks(facts: WorkflowFacts) -> list[Finding]:
    """All pure checks on one workflow's facts, deduplicated; a crashing check is an error finding."""
    found: list[Finding] = []
    for check, code in CHECKS:
        try:
            found.extend(check(facts))
        except Exception as exc:  # noqa: BLE001 - fail closed: a check that crashed proved nothing
            found.append(Finding("error", facts.id, code,
                                 f"the {check.__name__.removesuffix('_findings')} check crashed "
                                 f"({type(exc).__name__}: {exc}), so this workflow is not proven",
                                 hint="report this with the workflow folder; until then the workflow fails the check"))
    return _merge_examples(found)


def _merge_examples(found: list[Finding]) -> list[Finding]:
    """One finding for the same problem seen with several examples, naming them all."""
    seen: dict[tuple, tuple[Finding, list[str]]] = {}
    order = []
    for fd in found:
        m = re.search(r" \(with ([^)]+)\)", fd.message)
        base = fd.message.replace(m.group(0), "") if m else fd.message
        key = (fd.severity, fd.code, fd.rule, fd.file, fd.line, base)
        if key not in seen:
            seen[key] = (fd, [])
            order.append(key)
        if m:
            seen[key][1].append(m.group(1))
    out = []
    for key in order:
        fd, labels = seen[key]
        if labels:
            msg = key[5] + f" (with {', '.join(dict.fromkeys(labels))})"
            fd = Finding(fd.severity, fd.workflow, fd.code, msg, fd.hint, fd.rule, fd.file, fd.line)
        out.append(fd)
    return out
