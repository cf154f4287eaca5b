"""Proof: every acceptance check of workflow.yaml `evaluate:` is well-formed, so every run can be judged by it.

A check names a declared output of type json or a table type, with one path (no `{param}` pattern); a
JSON pointer goes with a json output and `{column, aggregate}` with a table; the pointer is RFC 6901, each
`{param}` placeholder in it names a param holding names (a string or a list of strings, not sensitive), and when the
output declares `keys` the pointer is one of them or below one; a column is one the output declares when
it declares a list of `columns` (or its `fixed`/`last` ones); a `{param}` threshold names a numeric,
not sensitive param (its value is recorded in run.json and the PROV record); every advice param is a
param of schema.json; `says` says something. The test and the aggregate are held to their lists by the
manifest's meta-schema (`manifest_invalid` names the field and the choices). Warnings: a check of an
output with `when` (its verdict is unknown for params that do not make it), a column the declaration
computes from the data (not provable here), an optional threshold param without a default.

Whether the checks hold on real runs is `snakegate test`'s to prove (test/<case>/verdict.yaml,
snakegate.contribute.testcases). Pure: facts in, findings out; nothing is read or run.
"""

from __future__ import annotations

from snakegate.check.declarations import _Declaration
from snakegate.check.facts import Finding, WorkflowFacts
from snakegate.contract import artifacts
from snakegate.contract.dialect import did_you_mean
from snakegate.contract.outputs import placeholders, pointer_problem, schema_types

CODE = "evaluate_invalid"
UNPROVEN = "evaluate_unproven"
FIX = "see `evaluate` in workflows/CONTRIBUTING.md"


class _Check(_Declaration):
    """One check under proof; `bad` collects its findings, `param` (declarations.py) finds a param's schema."""

    def __init__(self, f: WorkflowFacts, name: str):
        super().__init__(f, name, {})

    def bad(self, field: str, problem: str, fix: str, severity: str = "error", code: str | None = None) -> None:
        self.found.append(Finding(severity, self.f.id, code or (CODE if severity == "error" else UNPROVEN),
                                  f"evaluate.{self.name}.{field} {problem}", file=f"{self.f.rel}/workflow.yaml",
                                  hint=f"{fix} ({FIX})"))


def _output(c: _Check, check: dict, outputs: dict) -> dict | None:
    name = check.get("output")
    decl = outputs.get(name)
    if decl is None:
        close = did_you_mean(name, list(outputs))
        c.bad("output", f"names output `{name}`, which workflow.yaml does not declare"
              + (f" (did you mean `{close}`?)" if close else ""),
              f"name one of the declared outputs: {', '.join(sorted(outputs))}")
        return None
    kind = decl.get("type")
    if kind != "json" and not artifacts.is_table(kind):
        c.bad("output", f"names output `{name}`, a {kind} file; a check reads a json output or a table "
              "(csv-table, tsv-table, tsv)", "check a json or table output the workflow declares")
        return None
    if placeholders(decl.get("path") or ""):
        c.bad("output", f"names output `{name}`, whose path `{decl['path']}` is a pattern (one file per item); a "
              "check reads one file", "check an output with a fixed path (a summary over the items)")
        return None
    if decl.get("when"):
        c.bad("output", f"names output `{name}`, which is made only `when` its condition holds: runs whose params "
              "do not make it get an unknown verdict", "check an output every run makes, or accept the unknown",
              severity="warning")
    return decl


def _names_only(sub: dict, through_list: bool) -> bool:
    """Can the param only hold names: a string, a list of strings (or a field of each list item)?"""
    types = schema_types(sub)
    if types == {"string"}:
        return True
    items = sub.get("items")
    return not through_list and types == {"array"} and isinstance(items, dict) and schema_types(items) == {"string"}


def _covered(pointer: str, keys: list[str]) -> bool:
    """Is the pointer one of the declared keys or below one (the key's tokens holding no placeholder)?"""
    tokens = pointer[1:].split("/")
    for key in keys:
        if not isinstance(key, str) or not key.startswith("/"):
            continue
        head = key[1:].split("/")
        if tokens[:len(head)] == head and not any(placeholders(t) for t in tokens[:len(head)]):
            return True
    return False


def _pointer(c: _Check, pointer: str, output: str, decl: dict) -> None:
    problem = pointer_problem(pointer)
    if problem:
        c.bad("value", f"is not a JSON pointer: {problem}",
              "write an RFC 6901 pointer from the top of the file, e.g. `/accuracy` or `/segments/0/b`")
        return
    for param in dict.fromkeys(placeholders(pointer)):
        sub, through_list = c.param(f"value `{{{param}}}`", param)
        if sub is not None and sub.get("x-sensitive") is True:
            c.bad("value", f"has `{{{param}}}`, but param `{param}` is x-sensitive: each item is recorded in run.json "
                  "and the PROV record, where a sensitive value must never be", "put a param that is not sensitive in "
                  "the pointer")
        elif sub is not None and not _names_only(sub, through_list):
            c.bad("value", f"has `{{{param}}}`, but param `{param}` can hold more than names (its schema allows "
                  f"{', '.join(sorted(schema_types(sub))) or 'any value'})",
                  "put in the pointer only a param of type string or array of strings; the check holds for each item")
    keys = decl.get("keys")
    if keys is not None and not _covered(pointer, keys):
        c.bad("value", f"`{pointer}` is not among output `{output}`'s declared "
              f"keys, nor below one ({', '.join(keys)})",
              "declare the key under the output's `keys` (snakegate test proves it resolves), or point at a declared one")


def _column(c: _Check, column: str, output: str, decl: dict) -> None:
    spec = decl.get("columns")
    if spec is None:
        return
    if isinstance(spec, list):
        if column not in spec:
            close = did_you_mean(column, spec)
            c.bad("value.column", f"names column `{column}`, which output `{output}` does not declare"
                  + (f" (did you mean `{close}`?)" if close else ""),
                  f"name one of its columns: {', '.join(spec)}")
        return
    fixed = list(spec.get("fixed") or []) + list(spec.get("last") or [])
    if column in fixed:
        return
    if spec.get("of") or spec.get("plus"):
        c.bad("value.column", f"names column `{column}`, which the output's columns may hold only for some params "
              "(they come from the params or an input's header): not proven here; snakegate test measures it",
              "check a column of `fixed` or `last`, or make sure every run has it", severity="warning")
        return
    c.bad("value.column", f"names column `{column}`, which output `{output}` does not declare",
          f"name one of its columns: {', '.join(fixed)}")


def _threshold(c: _Check, threshold) -> None:
    if not isinstance(threshold, dict):
        return
    name = threshold.get("param")
    sub, through_list = c.param("threshold.param", name)
    if sub is None:
        return
    types = schema_types(sub)
    if through_list or not types or not types <= {"number", "integer"}:
        what = "a field of each list item" if through_list else ", ".join(sorted(types)) or "untyped"
        c.bad("threshold.param", f"names param `{name}`, which is not one number ({what})",
              "name a param of type number or integer, or write the threshold as a number")
    elif sub.get("x-sensitive") is True:
        c.bad("threshold.param", f"names param `{name}`, which is x-sensitive: a threshold is recorded in run.json "
              "and the PROV record, where a sensitive value must never be", "write the threshold as a number")
    elif "." not in name and name not in (c.f.schema.get("required") or []) and "default" not in sub:
        c.bad("threshold.param", f"names param `{name}`, which is optional without a default: a run without it "
              "gets an unknown verdict", f"give `{name}` a default in schema.json", severity="warning")


def evaluate_findings(f: WorkflowFacts) -> list[Finding]:
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    outputs = f.manifest.get("outputs") or {}
    out = []
    for name, check in sorted((f.manifest.get("evaluate") or {}).items()):
        c = _Check(f, name)
        if not str(check.get("says") or "").strip():
            c.bad("says", "is empty: a person reading the verdict learns nothing from a failure",
                  "say what failing means and what to change, e.g. `the background ROI holds signal; move it`")
        for i, param in enumerate(check.get("params") or []):
            c.param(f"params[{i}]", param)
        _threshold(c, check.get("threshold"))
        decl = _output(c, check, outputs)
        if decl is not None:
            value = check.get("value")
            if isinstance(value, str):
                if decl.get("type") != "json":
                    c.bad("value", f"is a JSON pointer, but output `{check['output']}` is a {decl.get('type')}",
                          "measure a table with {column: C, aggregate: mean|median|min|max|sum|count|std}")
                else:
                    _pointer(c, value, check["output"], decl)
            elif isinstance(value, dict):
                if decl.get("type") == "json":
                    c.bad("value", f"is a column aggregate, but output `{check['output']}` is json",
                          "measure a json output with a JSON pointer, e.g. `/accuracy`")
                else:
                    _column(c, value.get("column"), check["output"], decl)
        out.extend(c.found)
    return out
