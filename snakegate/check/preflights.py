"""Proof: a workflow's preflight.py is one pure function the gate can call, and it reads no file.

Pure over the facts (the gather step reads preflight.py's text; this module only
parses it with `ast`, never imports or runs it). Errors:
- `preflight_invalid`: it does not parse, or has no top-level `def preflight(params, artifacts)` taking
  exactly those two positional parameters (no defaults, *args, **kwargs or keyword-only ones, not async).
- `preflight_impure`: it steps outside an allowlist, each finding naming the line and the construct:
  - syntax: only the node types a pure function needs (`ALLOWED_NODES`: no `with`, `global`, `async`,
    `match`, ...);
  - imports: only pure standard-library modules (`ALLOWED_MODULES`), and none of their members that turn a
    string into an attribute or item lookup or evaluate text (`operator.attrgetter`, `itemgetter`,
    `methodcaller`, `string.Formatter`, `typing.get_type_hints`, ...);
  - builtins: only `SAFE_BUILTINS` (no `open`, `exec`, `eval`, `getattr`, `type`, `vars`, `print`, ...), not
    even as a name it binds itself; `getattr(x, "name")` only with a literal name that is an allowed attribute;
  - attributes: only the public attributes of the plain data types and the allowed modules
    (`ALLOWED_ATTRIBUTES`) and those the file defines itself; never a dunder (`x.__class__`), and never
    `.format` / `.format_map` (whose template string reaches attributes: use an f-string);
  - strings: no dunder name (`"__globals__"`) in any string or bytes literal.
  Any of these could let it read a file, reach the process's globals or escape the read-only view the gate
  hands it. The gate runs preflight.py in the sandbox whatever this says (`snakegate.gate.sandbox`): this
  proof keeps contributed preflights plain enough for a reviewer to read them as pure.
That every example passes the preflight is proven where every example is gated (`examples`: a refusal there
is an `example_invalid` finding with code `[preflight]`).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import types

from snakegate.check.facts import Finding, WorkflowFacts

ALLOWED_MODULES = frozenset({
    "math", "cmath", "re", "itertools", "collections", "functools", "operator", "statistics", "fractions",
    "decimal", "numbers", "string", "difflib", "bisect", "heapq", "enum", "typing", "dataclasses",
    "__future__",
})
# Members of the allowed modules that look an attribute or item up by a string, evaluate text, reach a
# module's namespace or build functions: the ways from "a string" to "any object".
FORBIDDEN_MEMBERS = frozenset({
    "attrgetter", "itemgetter", "methodcaller", "Formatter", "Template", "get_type_hints", "ForwardRef",
    "evaluate_forward_ref", "make_dataclass", "global_enum", "global_enum_repr", "global_flag_repr", "global_str",
    "FunctionType", "mro",
})
STRING_GETTERS = frozenset({"format", "format_map", "vformat", "get_field", "get_value"})
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "str", "sum", "tuple", "zip", "True", "False", "None", "NotImplemented", "Ellipsis",
    "ArithmeticError", "AssertionError", "Exception", "IndexError", "KeyError", "LookupError", "OverflowError",
    "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
})
ALLOWED_NODES = (
    ast.Module, ast.Expr, ast.Pass, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.If,
    ast.For, ast.While, ast.Break, ast.Continue, ast.Raise, ast.Try, ast.ExceptHandler, ast.Assert,
    ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.arguments, ast.arg, ast.keyword, ast.Import, ast.ImportFrom,
    ast.alias, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Dict, ast.Set, ast.List, ast.Tuple,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension, ast.Compare, ast.Call,
    ast.Constant, ast.Attribute, ast.Subscript, ast.Slice, ast.Starred, ast.Name, ast.NamedExpr, ast.JoinedStr,
    ast.FormattedValue, ast.Yield, ast.YieldFrom,
    ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)
# How a refused node type reads in a message.
CONSTRUCTS = {
    "With": "a `with` statement", "AsyncWith": "an `async with` statement", "AsyncFunctionDef": "an async function",
    "AsyncFor": "an `async for` loop", "Await": "`await`", "Global": "a `global` statement",
    "Nonlocal": "a `nonlocal` statement", "Match": "a `match` statement", "TryStar": "`except*`",
}
DUNDER = re.compile(r"__\w+__")
HINT_PURE = ("a preflight decides from `params` and the `artifacts` view alone (headers, shapes, dtypes); "
             "do the file reading in a rule's script, and use only pure standard-library modules "
             f"({', '.join(sorted(ALLOWED_MODULES - {'__future__'}))}), plain data types and f-strings")


def _public(obj) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def _allowed_attributes() -> frozenset[str]:
    """The public attributes of the plain data types a preflight is handed or builds, of the allowed modules
    and of the classes they define (a metaclass's, a foreign module's and the forbidden members' excepted)."""
    names: set[str] = set()
    for kind in (str, bytes, list, tuple, dict, set, frozenset, int, float, complex, bool, range, slice,
                 BaseException, types.MappingProxyType):
        names |= _public(kind)
    for module_name in ALLOWED_MODULES - {"__future__"}:
        module = importlib.import_module(module_name)
        for member in _public(module) - FORBIDDEN_MEMBERS:
            value = getattr(module, member)
            if isinstance(value, types.ModuleType) and member not in ALLOWED_MODULES:
                continue  # enum.sys, statistics.random, dataclasses.inspect: a way out, not an API
            names.add(member)
            if isinstance(value, type) and not issubclass(value, type):
                names |= _public(value)
    return frozenset(names - FORBIDDEN_MEMBERS - STRING_GETTERS)


ALLOWED_ATTRIBUTES = _allowed_attributes()


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
    own = _own_attributes(tree)
    getattr_calls = {id(node.func) for node in ast.walk(tree) if _plain_getattr(node, own)}
    out = []

    def impure(node, message: str) -> None:
        out.append(finding("preflight_impure", f"preflight.py {message}", getattr(node, "lineno", None), HINT_PURE))

    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED_NODES):
            if isinstance(node, ast.AsyncFunctionDef) and node.name == "preflight":
                continue  # the signature proof already says it must not be async
            name = type(node).__name__
            impure(node, f"uses {CONSTRUCTS.get(name, f'`{name}`')}, which a pure preflight does not need")
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _import_findings(node, impure)
        elif isinstance(node, ast.Name):
            if node.id == "getattr" and id(node) in getattr_calls:
                continue
            if DUNDER.fullmatch(node.id) or (hasattr(builtins, node.id) and node.id not in SAFE_BUILTINS):
                what = ("with a name that is not a literal attribute it may read (`getattr(x, \"name\")` with an "
                        "allowed name only)" if node.id == "getattr" else "which can read files, run code or "
                        "reach objects the check cannot see")
                impure(node, f"uses `{node.id}`, {what}")
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg, ast.ExceptHandler)):
            name = node.arg if isinstance(node, ast.arg) else node.name
            if name and (DUNDER.fullmatch(name) or (hasattr(builtins, name) and name not in SAFE_BUILTINS)):
                impure(node, f"defines the name `{name}`, which stands for a builtin or dunder a preflight may not "
                             "use; rename it")
        elif isinstance(node, ast.Attribute):
            _attribute_findings(node, own, impure)
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            found = DUNDER.search(text)
            if found:
                impure(node, f"holds the string `{found.group(0)}`: a dunder name is how code looks up what "
                             "the read-only view hides")
    return out


def _import_findings(node, impure) -> None:
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    else:
        modules = ["." * node.level + (node.module or "")]
    for module in modules:
        if module.split(".")[0] not in ALLOWED_MODULES or module.startswith("."):
            impure(node, f"imports `{module}`, which a pure preflight may not use (it could read files, start "
                         "processes or reach the network)")
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name == "*":
                impure(node, f"imports `*` from `{node.module}`: name what it uses")
            elif alias.name in FORBIDDEN_MEMBERS or alias.name.startswith("_"):
                impure(node, f"imports `{node.module}.{alias.name}`, which looks things up by a string or "
                             "evaluates text")
    for alias in node.names:
        if alias.asname and (DUNDER.fullmatch(alias.asname) or hasattr(builtins, alias.asname)):
            impure(node, f"imports a module as `{alias.asname}`, the name of a builtin or dunder; rename it")


def _attribute_findings(node: ast.Attribute, own: set[str], impure) -> None:
    shown = _shown(node)
    if node.attr.startswith("__") and node.attr.endswith("__"):
        impure(node, f"touches the attribute `{node.attr}`, a way out of the read-only view it is given")
    elif node.attr in FORBIDDEN_MEMBERS:
        impure(node, f"uses `{shown}`, which looks an attribute or item up by a string or evaluates text")
    elif node.attr in STRING_GETTERS:
        impure(node, f"uses `{shown}`, whose template string can reach attributes (`{{0.attr}}`); "
                     "write an f-string instead")
    elif node.attr not in ALLOWED_ATTRIBUTES and node.attr not in own:
        impure(node, f"uses `{shown}`: `{node.attr}` is not an attribute of the plain data types or the "
                     "allowed modules, nor one preflight.py defines")


def _own_attributes(tree: ast.Module) -> set[str]:
    """Attribute names the file defines itself: names bound in a class body, and attributes it assigns."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    own.add(stmt.name)
                for target in _targets(stmt):
                    if isinstance(target, ast.Name):
                        own.add(target.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
    return {name for name in own if not DUNDER.fullmatch(name)}


def _targets(stmt) -> list:
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return [stmt.target]
    return []


def _plain_getattr(node, own: set[str]) -> bool:
    """`getattr(x, "name")` / `getattr(x, "name", default)` with a literal, allowed, non-dunder name."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and 2 <= len(node.args) <= 3 and not node.keywords):
        return False
    name = node.args[1]
    return (isinstance(name, ast.Constant) and isinstance(name.value, str) and not name.value.startswith("_")
            and (name.value in ALLOWED_ATTRIBUTES or name.value in own))


def _shown(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - only used in a message
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."
