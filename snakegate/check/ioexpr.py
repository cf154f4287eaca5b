"""A rule's input and output arguments as written, and the top-level names they use, as plain tuples (pure).

`describe(node)` turns one argument into a small tuple that `snakegate.contribute.draft_io` can evaluate
without running anything: `("literal", "a.txt")`, `("name", "SAMPLES")`, `("function", "lambda w: ...",
what it returns)`, `("ref", "map", "output", None | "bam" | 0)` for `rules.map.output[.bam|[0]]`,
`("expand", pattern, ((keyword, description), ...))`, `("multiext", base, (ext, ...))`, `("list",
(description, ...))`, `("unpack", description)` and `("other", source)` for anything else (a config read,
a call of a library, a string joined from a value: `"results/" + name`; one joined from literals alone is
a literal).
`bindings(tree)` reads what a file's top level binds: names bound once to a literal list of strings, names
bound to a `glob_wildcards(...)` of a literal pattern, and the functions it defines with what each returns
(described the same way; a dict literal's keys are the names `unpack()` gives, as are those of
`dict(zip(["fq1", "fq2"], ...))`; a local list the function builds with `=`, `.append`, `.extend` and `+=`
before returning it is the list of what it may hold). Nothing is read from disk and nothing is executed here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# Calls that mark a path without changing it: temp("x") is the file x.
_FLAGS = frozenset({"temp", "protected", "directory", "ancient", "touch", "pipe", "report", "ensure", "local",
                    "service", "update", "before_update", "storage", "from_queue"})
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)")


@dataclass
class Bindings:
    """What one file's top level binds; every value is plain data."""

    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SAMPLES = ["a", "b"]
    globbed: dict[str, str] = field(default_factory=dict)  # BOOKS, = glob_wildcards("data/{book}.txt") -> pattern
    # def f(...): return ... -> (what each return gives, every return described?), in order
    functions: dict[str, tuple[tuple, bool]] = field(default_factory=dict)


def _str(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _source(node) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - only shown in a message
        return "?"


def _call_name(node) -> str | None:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def _ref(node) -> tuple | None:
    """rules.<r>.output, rules.<r>.output.<name>, rules.<r>.output[<i>] (and .input)."""
    selector = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        selector, node = node.slice.value, node.value
    elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
          and node.value.attr in ("output", "input")):
        selector, node = node.attr, node.value
    if (isinstance(node, ast.Attribute) and node.attr in ("output", "input") and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name) and node.value.value.id == "rules"):
        if selector is None or isinstance(selector, (str, int)):
            return ("ref", node.value.attr, node.attr, selector)
    return None


def describe(node) -> tuple:
    """One input/output argument (or a value inside one) as a plain tuple; see the module docstring."""
    text = _str(node)
    if text is not None:
        return ("literal", text)
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Lambda):  # what it returns, for unpack(lambda w: {...} if ... else {...})
        return ("function", _source(node), tuple(_returned(node.body)))
    ref = _ref(node)
    if ref is not None:
        return ref
    if isinstance(node, (ast.List, ast.Tuple)):
        return ("list", tuple(describe(e) for e in node.elts))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = describe(node.left), describe(node.right)
        if left[0] == "literal" and right[0] == "literal":  # "results/" + "summary.csv"
            return ("literal", left[1] + right[1])
        if "literal" in (left[0], right[0]) or "other" in (left[0], right[0]):  # "results/" + name: a string
            return ("other", _source(node))
        return ("list", (left, right))  # expand(...) + ["x"]: lists joined
    name = _call_name(node)
    if name == "join" and node.args and not node.keywords:  # os.path.join("results", "summary.csv")
        parts = [_str(a) for a in node.args]
        if all(p is not None for p in parts) and not any(isinstance(a, ast.JoinedStr) for a in node.args):
            return ("literal", "/".join(p.rstrip("/") for p in parts[:-1]) + ("/" if len(parts) > 1 else "")
                    + parts[-1])
        return ("other", _source(node))
    if name in _FLAGS and node.args:
        return describe(node.args[0])
    if name == "unpack" and node.args:
        return ("unpack", describe(node.args[0]))
    if name == "expand" and node.args and _str(node.args[0]) is not None:
        return ("expand", _str(node.args[0]), tuple((k.arg, describe(k.value)) for k in node.keywords if k.arg))
    if name == "multiext" and node.args and _str(node.args[0]) is not None:
        return ("multiext", _str(node.args[0]), tuple(_str(a) or "" for a in node.args[1:]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        return ("name", node.func.id)  # get_final_output(): what the function returns, when it is written out
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # GLOBBED.sample
        return ("name", f"{node.value.id}.{node.attr}")
    return ("other", _source(node))


def fields(pattern: str) -> list[str]:
    """The wildcards of a pattern, in order, without repeats ({{x}} is no field)."""
    return list(dict.fromkeys(_FIELD.findall(pattern.replace("{{", "\x00"))))


def _returned(node) -> list[tuple]:
    """One returned expression, described; a dict literal with literal keys as ("dict", ((key, value), ...)), and
    both branches of `a if c else b`."""
    if isinstance(node, ast.IfExp):
        return _returned(node.body) + _returned(node.orelse)
    if isinstance(node, ast.Dict):
        keys = [_str(k) for k in node.keys]
        if all(k is not None for k in keys):
            return [("dict", tuple((k, describe(v)) for k, v in zip(keys, node.values)))]
    zipped = _dict_of_zip(node)
    if zipped is not None:
        return [zipped]
    return [describe(node)]


def _dict_of_zip(node) -> tuple | None:
    """dict(zip(["fq1", "fq2"], expand(...))): the keys are the literal names; each may be any of the values."""
    if (_call_name(node) == "dict" and len(node.args) == 1 and not node.keywords and _call_name(node.args[0]) == "zip"
            and len(node.args[0].args) == 2 and isinstance(node.args[0].args[0], (ast.List, ast.Tuple))):
        keys = [_str(k) for k in node.args[0].args[0].elts]
        if keys and all(k is not None for k in keys):
            return ("dict", tuple((k, describe(node.args[0].args[1])) for k in keys))
    return None


def _local_lists(fn) -> dict[str, list[tuple]]:
    """A function's local names, each with what it is built of: `x = expand(...)`, `x.append("a")`,
    `x.extend(...)`, `x += [...]` (every branch: what it may hold)."""
    pieces: dict[str, list[tuple]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            pieces.setdefault(node.targets[0].id, []).append(describe(node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            pieces.setdefault(node.target.id, []).append(describe(node.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
              and node.func.attr in ("append", "extend") and isinstance(node.func.value, ast.Name)):
            pieces.setdefault(node.func.value.id, []).append(describe(node.args[0]))
    return pieces


def _returns(fn) -> tuple[tuple, bool]:
    values, complete = [], True
    local = _local_lists(fn) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Return):
            if node.value is None:
                complete = False
                continue
            if isinstance(node.value, ast.Name) and node.value.id in local:  # return final_output, built above
                built = local[node.value.id]
                values.append(("list", tuple(built)))
                complete = complete and all(d[0] not in ("other", "function") for d in built)
                continue
            for desc in _returned(node.value):
                values.append(desc)
                complete = complete and desc[0] not in ("other", "function")
    return tuple(values), complete and bool(values)


def bindings(tree: ast.Module) -> Bindings:
    """Pure: the top-level names of one compiled Snakefile (rules' own functions are skipped)."""
    out = Bindings()
    spoiled: set[str] = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.If, ast.With, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
            elif isinstance(node, ast.FunctionDef) and not node.decorator_list:
                out.functions[node.name] = _returns(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                _assign(node.targets[0], node.value)

    def _assign(target, value):
        if _call_name(value) == "glob_wildcards" and value.args and _str(value.args[0]) is not None:
            pattern = _str(value.args[0])
            names = fields(pattern)
            if isinstance(target, (ast.Tuple, ast.List)):
                for elt, wildcard in zip(target.elts, names):
                    if isinstance(elt, ast.Name):
                        out.globbed[elt.id] = pattern
            elif isinstance(target, ast.Name):
                for wildcard in names:
                    out.globbed[f"{target.id}.{wildcard}"] = pattern
            return
        if isinstance(value, ast.Attribute) and _call_name(value.value) == "glob_wildcards" and value.value.args:
            pattern = _str(value.value.args[0])
            if pattern is not None and isinstance(target, ast.Name):
                out.globbed[target.id] = pattern
            return
        if isinstance(target, ast.Name):
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else None
            strings = [_str(e) for e in items] if items is not None else None
            if strings is not None and all(isinstance(e, ast.Constant) and t is not None
                                           for e, t in zip(items, strings)):
                if target.id in out.lists:
                    spoiled.add(target.id)
                out.lists[target.id] = tuple(strings)
            else:
                spoiled.add(target.id)

    visit(tree.body)
    for name in spoiled:
        out.lists.pop(name, None)
    return out
