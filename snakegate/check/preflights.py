"""Proof: a workflow's preflight.py is one pure function the gate can call, and it reads no file.

Pure over the facts (the gather step reads preflight.py's text; this module only
parses it with `ast`, never imports or runs it). Errors:
- `preflight_invalid`: it does not parse, or has no top-level `def preflight(params, artifacts)` taking
  exactly those two positional parameters (no defaults, *args, **kwargs or keyword-only ones, not async).
- `preflight_impure`: it imports a module outside the pure standard-library allowlist (files, processes,
  network, numpy/pandas loaders, snakegate itself), names a builtin that reaches files or code (`open`,
  `exec`, `eval`, `__import__`, `getattr`, ...), or touches a dunder attribute (`x.__class__`), any of which
  would let it read a file or escape the read-only view the gate hands it.
That every example passes the preflight is proven where every example is gated (`examples`: a refusal there
is an `example_invalid` finding with code `[preflight]`).
"""

from __future__ import annotations

import ast

from snakegate.check.facts import Finding, WorkflowFacts

ALLOWED_MODULES = frozenset({
    "math", "cmath", "re", "itertools", "collections", "functools", "operator", "statistics", "fractions",
    "decimal", "numbers", "string", "difflib", "bisect", "heapq", "enum", "typing", "dataclasses",
    "__future__",
})
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "__import__", "input", "breakpoint", "globals", "locals", "vars",
    "getattr", "setattr", "delattr", "__builtins__", "__loader__", "__spec__", "memoryview",
})
HINT_PURE = ("a preflight decides from `params` and the `artifacts` view alone (headers, shapes, dtypes); "
             "do the file reading in a rule's script, and use only pure standard-library modules "
             f"({', '.join(sorted(ALLOWED_MODULES - {'__future__'}))})")


def preflight_findings(f: WorkflowFacts) -> list[Finding]:
    if f.preflight_source is None:
        return []
    where = f.preflight_file or f"{f.rel}/preflight.py"

    def finding(code: str, message: str, line: int | None, hint: str) -> Finding:
        return Finding("error", f.id, code, message, hint=hint, file=where, line=line)

    try:
        tree = ast.parse(f.preflight_source, filename=where)
    except SyntaxError as exc:
        return [finding("preflight_invalid", f"preflight.py does not parse: {exc.msg}", exc.lineno,
                        "fix the syntax; the gate refuses every run of this workflow until it loads")]
    return _signature_findings(tree, finding) + _purity_findings(tree, finding)


def _signature_findings(tree: ast.Module, finding) -> list[Finding]:
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "preflight"]
    want = "def preflight(params, artifacts): -> list of {path, message, hint?, choices?}"
    if not defs:
        return [finding("preflight_invalid", "preflight.py defines no top-level function `preflight`", None,
                        f"define `{want}` (see workflows/CONTRIBUTING.md)")]
    fn = defs[-1]  # the last definition is the one the module ends up with
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    problems = []
    if isinstance(fn, ast.AsyncFunctionDef):
        problems.append("it is async")
    if names != ["params", "artifacts"]:
        problems.append(f"it takes ({', '.join(names)}), not (params, artifacts)")
    if a.vararg or a.kwarg or a.kwonlyargs:
        problems.append("it takes *args, **kwargs or keyword-only parameters")
    if a.defaults:
        problems.append("its parameters have defaults")
    if not problems:
        return []
    return [finding("preflight_invalid", f"`preflight` has the wrong signature: {'; '.join(problems)}", fn.lineno,
                    f"write exactly `{want}`; the gate calls it with the resolved params and the artifact views")]


def _purity_findings(tree: ast.Module, finding) -> list[Finding]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = ["." * node.level + (node.module or "")]
        else:
            modules = []
        for module in modules:
            if module.split(".")[0] not in ALLOWED_MODULES or module.startswith("."):
                out.append(finding("preflight_impure", f"preflight.py imports `{module}`, which a pure preflight "
                                                       "may not use (it could read files, start processes or reach "
                                                       "the network)", node.lineno, HINT_PURE))
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            out.append(finding("preflight_impure", f"preflight.py uses `{node.id}`, which can read files or run "
                                                   "code the check cannot see", node.lineno, HINT_PURE))
        if isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            out.append(finding("preflight_impure", f"preflight.py touches the attribute `{node.attr}`, a way out "
                                                   "of the read-only view it is given", node.lineno, HINT_PURE))
    return out
