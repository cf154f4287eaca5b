"""Proof 4, examples and the contract: workflow.yaml and schema.json are well formed, every example passes
the gate and Snakemake builds its DAG; a DAG failure is explained (hidden input, undeclared key) where it can be.

Pure: facts in, findings out.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from snakegate.check.facts import Finding, WorkflowFacts, undeclared_at
from snakegate.contract.dialect import contract_problems

HIDDEN_HINT = ("give the file through an x-artifact param in schema.json (or a path column of a sample sheet) and "
               "name it in the rule's input: (e.g. input: table=config[\"table_file\"]), or produce it with another rule")


def contract_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    manifest_file = f"{f.rel}/workflow.yaml"
    for problem in f.manifest_problems:
        out.append(Finding("error", f.id, "manifest_invalid", problem, file=manifest_file,
                           hint="fix workflow.yaml to match snakegate/schemas/workflow.schema.json (see workflows/CONTRIBUTING.md)"))
    schema_file = f"{f.rel}/schema.json"
    if f.schema_problem:
        out.append(Finding("error", f.id, "schema_invalid", f.schema_problem, file=schema_file,
                           hint="every workflow needs a schema.json JSON Schema 2020-12 parameter contract"))
    elif f.schema is not None:
        for code, sentence in contract_problems(f.schema):
            hint = ("make the default satisfy its own type, range or enum, or drop it" if code == "default_invalid"
                    else "see snakegate/schemas/contract.schema.json and workflows/CONTRIBUTING.md")
            out.append(Finding("error", f.id, code, sentence, file=schema_file, hint=hint))
    for code, message in f.crashes:
        out.append(Finding("error", f.id, code, message,
                           hint="this is a crash inside snakegate check; the workflow cannot be proven until it is fixed"))
    return out




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
                more = _also_missing(f, files)
                also = ("; Snakemake stops at the first job whose input is missing, and the Snakefile names more "
                        f"files no rule makes: {', '.join(more)}" if more else "")
                out.append(Finding("error", f.id, "hidden_input",
                                   f"{PurePosixPath(ex.name).name}: rule `{rule}` reads {', '.join(files)}, which no job "
                                   f"produces and no x-artifact param names (a hidden input){also}", rule=rule,
                                   file=ex.name, hint=HIDDEN_HINT))
                continue
            key = _key_error(message)
            if key is not None:
                if f.source and f.schema is not None and any(
                        r.path[0] == key and undeclared_at(f.schema, r.path) is not None for r in f.source.reads):
                    continue  # the cause is an undeclared config key, reported by config_key_findings
                message = (f"KeyError {key!r}: the Snakefile reads a config key that these params do not contain "
                           "(is it optional without a default? use config.get or give it a default in schema.json)")
            out.append(Finding("error", f.id, "dag_error",
                               f"{PurePosixPath(ex.name).name}: Snakemake cannot build the DAG: {message}",
                               file=file or ex.name, line=line,
                               hint="fix the rules so `snakemake -n` works for this example (cycles, ambiguous "
                                    "outputs and missing inputs are the usual causes)"))
    return out


def _also_missing(f: WorkflowFacts, named: list[str]) -> list[str]:
    """The other plain-string inputs of the Snakefile that no rule's output can make (`rule r: path`), read as
    written: the DAG stopped at the first missing file, so these are what a user would meet next (pure)."""
    rules = f.source.rules if f.source else []
    outputs = [re.compile(re.sub(r"\\\{[^{}]*\\\}", ".+", re.escape(path)) + "$")
               for r in rules for path in r.paths["output"].values() if path]
    more = []
    for r in rules:
        for name in r.plain_inputs:
            path = r.paths["input"].get(name)
            if (not path or "{" in path or path.startswith("/") or path in named
                    or any(o.match(path) for o in outputs) or f"`{r.name}`: {path}" in more):
                continue
            more.append(f"`{r.name}`: {path}")
    return more


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

