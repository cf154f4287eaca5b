"""Proof: what each declared output says it holds (`columns`, `keys`, `when` in workflow.yaml) is well-formed.

`columns` sits only on a table output and `keys` only on a JSON one; `columns.of` names an x-artifact table
param; `keep`, `minus` and `plus` name params that can only hold column names (a list of strings; `plus` also
one string); `order: keep` comes with `keep`; an `each` template holds `{}`; every key is an RFC 6901 JSON
pointer; `when` names scalar params and values their schema allows. An output whose `when` holds for no
example gets a warning: no example shows it produced. Whether a declaration tells the truth about real files
is `snakegate test`'s to prove (snakegate.contribute.testcases).

Pure: facts in, findings out; nothing is read or run.
"""

from __future__ import annotations

from jsonschema import Draft202012Validator

from snakegate.check.facts import Finding, WorkflowFacts, properties
from snakegate.contract import artifacts
from snakegate.contract.dialect import did_you_mean
from snakegate.contract.outputs import param_schema, pointer_problem, produced_when, schema_types as _types

CODE = "declaration_invalid"
UNEXERCISED = "when_unexercised"
FIX = "see `outputs` in workflows/CONTRIBUTING.md"


def _strings_only(sub: dict) -> bool:
    return _types(sub) == {"string"}


class _Declaration:
    """One output's declaration under proof; `bad` collects its findings."""

    def __init__(self, f: WorkflowFacts, name: str, decl: dict):
        self.f, self.name, self.decl = f, name, decl
        self.found: list[Finding] = []

    def bad(self, field: str, problem: str, fix: str, severity: str = "error", code: str = CODE) -> None:
        self.found.append(Finding(severity, self.f.id, code, f"outputs.{self.name}.{field} {problem}",
                                  file=f"{self.f.rel}/workflow.yaml", hint=f"{fix} ({FIX})"))

    def param(self, field: str, name: str) -> tuple[dict | None, bool]:
        """The subschema of the param `field` names, or a finding when schema.json does not declare it."""
        sub, through_list, missing = param_schema(self.f.schema, name)
        if sub is None:
            close = did_you_mean(missing, list(properties(self.f.schema)))
            self.bad(field, f"names param `{name}`, which schema.json does not declare"
                     + (f" (did you mean `{close}`?)" if close else ""),
                     f"name a param of schema.json{f', e.g. `{close}`' if close else ''}, or drop `{field}`")
        return sub, through_list

    def names_param(self, field: str, name: str, one_string_too: bool = False) -> None:
        """`name` is a param that can only hold column names: a list of strings (or one string)."""
        sub, through_list = self.param(field, name)
        if sub is None:
            return
        if through_list or (one_string_too and _strings_only(sub)):
            ok = _strings_only(sub)
        else:
            items = sub.get("items")
            ok = _types(sub) == {"array"} and isinstance(items, dict) and _strings_only(items)
        if not ok:
            holds = "a list of strings" + (" or one string" if one_string_too else "")
            self.bad(field, f"names param `{name}`, which can hold more than column names (its schema allows "
                     f"{', '.join(sorted(_types(sub))) or 'any value'}; {field} needs {holds})",
                     f"point `{field}` at a param of type array with items of type string"
                     + (" (or of type string)" if one_string_too else ""))


def _columns(d: _Declaration, spec) -> None:
    if isinstance(spec, list):
        return  # a fixed list: the meta-schema already holds it to distinct names
    of = spec.get("of")
    if of is not None:
        sub, through_list = d.param("columns.of", of)
        if sub is not None:
            art = sub.get("x-artifact")
            if through_list or not (isinstance(art, str) and artifacts.is_table(art)):
                what = ("a field of each list item" if through_list else f"a {art} file" if art else
                        "not an x-artifact file")
                d.bad("columns.of", f"names param `{of}`, which is {what}, not one x-artifact table whose header "
                      "gives the columns", "name the x-artifact csv-table/tsv-table param the output's columns "
                      "come from, or list the columns")
    for field in ("keep", "minus"):
        if spec.get(field) is not None:
            if of is None:
                d.bad(f"columns.{field}", "has no `of`: it picks columns of the table `of` names",
                      "add `of: <the table param>` or drop it")
            d.names_param(f"columns.{field}", spec[field])
    if spec.get("order") == "keep" and spec.get("keep") is None:
        d.bad("columns.order", "is `keep`, but there is no `keep` list to take the order from",
              "add `keep: <the list param>` or drop `order`")
    plus = spec.get("plus")
    for i, entry in enumerate([plus] if isinstance(plus, str) else plus or []):
        where = "columns.plus" if isinstance(plus, str) else f"columns.plus[{i}]"
        if isinstance(entry, str):
            d.names_param(where, entry, one_string_too=True)
            continue
        d.names_param(f"{where}.param", entry["param"], one_string_too=True)
        for template in entry.get("each") or []:
            if "{}" not in template:
                d.bad(f"{where}.each", f"template `{template}` has no `{{}}`, so every item gives the same column",
                      "write `{}` where the item goes, e.g. `{}_predicted`")
    if not (of or spec.get("fixed") or plus or spec.get("last")):
        d.bad("columns", "declares no columns (no `of`, `fixed`, `plus` or `last`)",
              "say where the columns come from, or drop `columns`")


def _when(d: _Declaration, when: dict) -> None:
    for name, allowed in when.items():
        sub, through_list = d.param(f"when.{name}", name)
        if sub is None:
            continue
        if through_list or _types(sub) & {"array", "object"} or not _types(sub):
            d.bad(f"when.{name}", f"tests param `{name}`, which is not one plain value "
                  f"({'one per list item' if through_list else ', '.join(sorted(_types(sub))) or 'untyped'})",
                  "make `when` test a param of type string, number, integer or boolean (or an enum)")
            continue
        check = Draft202012Validator({k: v for k, v in sub.items() if k not in ("default", "description")})
        for value in allowed if isinstance(allowed, list) else [allowed]:
            errors = list(check.iter_errors(value))
            if errors:
                choices = sub.get("enum")
                d.bad(f"when.{name}", f"allows {value!r}, which param `{name}` can never have: {errors[0].message}",
                      f"use a value schema.json allows{f' (one of {choices})' if choices else ''}")


def declaration_findings(f: WorkflowFacts) -> list[Finding]:
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    out = []
    for name, decl in sorted((f.manifest.get("outputs") or {}).items()):
        d = _Declaration(f, name, decl)
        kind = decl.get("type")
        if "columns" in decl:
            if not artifacts.is_table(kind):
                d.bad("columns", f"is declared on a `{kind}` output; only tables (csv-table, tsv-table, tsv) have "
                      "columns", "drop `columns`, or give the output its table type")
            else:
                _columns(d, decl["columns"])
        if "keys" in decl:
            if kind != "json":
                d.bad("keys", f"is declared on a `{kind}` output; only json outputs have keys",
                      "drop `keys`, or give the output type json")
            for i, key in enumerate(decl["keys"]):
                problem = pointer_problem(key)
                if problem:
                    d.bad(f"keys[{i}]", f"is not a JSON pointer: {problem}",
                          "write an RFC 6901 pointer from the top of the file, e.g. `/accuracy` or `/segments/0/b`")
        if decl.get("when"):
            _when(d, decl["when"])
            gated = [ex for ex in f.examples if ex.resolved_params is not None]
            if not d.found and gated and not any(produced_when(decl, ex.resolved_params) for ex in gated):
                d.bad("when", f"holds for none of the examples ({', '.join(ex.name.rsplit('/', 1)[-1] for ex in gated)}), "
                      "so no example shows the output being produced", "add an example whose params meet it",
                      severity="warning", code=UNEXERCISED)
        out.extend(d.found)
    return out
