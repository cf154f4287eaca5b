"""Which `config` keys a Snakefile reads, found statically from its source.

The Snakefile (and every `.smk` it includes with a literal path) is translated
to Python with Snakemake's own parser (`snakemake.parser.parse`), and the
Python AST is walked for `config["k"]`, `config.get("k")`, `config["a"]["b"]`,
`"k" in config` and `{config[k]}` inside shell strings, anywhere: rule
directives, lambdas, functions, `run:` blocks. Line numbers are mapped back to
the Snakefile's own lines. An access whose key is not a literal (and not a
name bound once to a string, or a loop over a literal list of strings) is
reported as dynamic. Nothing is executed; files are only read.
"""

from __future__ import annotations

import ast
import re
import types
from dataclasses import dataclass, field
from pathlib import Path

# Calls that Snakemake's parser generates inside a rule's function and that pass
# the whole config along to a script, notebook or wrapper (not a user's read).
_GENERATED_CALLS = frozenset({"script", "notebook", "wrapper", "cwl", "template_engine"})
# Methods that read one key of a mapping.
_KEY_METHODS = frozenset({"get", "setdefault", "pop"})
# `{config[a][b]}` inside a shell command or any format string.
_FORMAT_RE = re.compile(r"\{config((?:\[[^\[\]{}]+\])+)")
_FORMAT_PART_RE = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True)
class ConfigRead:
    """One statically resolved read: `path` is the key path, e.g. ('model', 'C')."""

    path: tuple[str, ...]
    file: str
    line: int | None
    rule: str | None


@dataclass(frozen=True)
class DynamicAccess:
    """A config access whose key cannot be resolved; `prefix` is the resolved part before it."""

    prefix: tuple[str, ...]
    file: str
    line: int | None
    rule: str | None
    text: str
    whole: bool = False  # `config` itself used as a whole (passed on, iterated, unpacked)


@dataclass
class ConfigScan:
    reads: list[ConfigRead] = field(default_factory=list)
    dynamic: list[DynamicAccess] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # Snakefile and included files, in reading order
    # (file, line, schema path as written) for each `validate(config, "<schema>")` call
    validations: list[tuple[str, int | None, str | None]] = field(default_factory=list)
    # (file, line, message) for includes that could not be followed
    unfollowed: list[tuple[str, int | None, str]] = field(default_factory=list)
    # file -> {line of the compiled Python: line of that file}; Snakemake's own rule.lineno and
    # exception line numbers count compiled lines, so they are mapped back through these
    linemaps: dict[str, dict[int, int]] = field(default_factory=dict)

    def source_line(self, file: str | None, line: int | None) -> int | None:
        if file is None or line is None or file not in self.linemaps:
            return line
        return self.linemaps[file].get(line, line)


class SnakefileSyntaxError(Exception):
    def __init__(self, message: str, file: str, line: int | None):
        super().__init__(message)
        self.message, self.file, self.line = message, file, line


class _SourceCache:
    """The one thing `snakemake.parser.parse` needs from a Workflow: a way to open the file."""

    def open(self, source, mode="r"):
        return open(source.get_path_or_uri(secret_free=True), mode, encoding="utf-8")


def compile_snakefile(path: Path) -> tuple[str, dict[int, int]]:
    """(Python source, {compiled line: Snakefile line}) via Snakemake's own parser."""
    from snakemake.sourcecache import LocalSourceFile

    from snakemake.parser import parse

    linemap: dict[int, int] = {}
    try:
        code, _ = parse(LocalSourceFile(str(path)), types.SimpleNamespace(sourcecache=_SourceCache()), linemap)
    except SyntaxError as exc:  # Snakemake reports its own grammar errors as SyntaxError
        raise SnakefileSyntaxError(exc.msg or str(exc), str(path), exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnakefileSyntaxError(f"cannot read it ({exc})", str(path), None) from None
    except Exception as exc:  # noqa: BLE001 - tokenizer errors and the like: the file does not parse
        raise SnakefileSyntaxError(f"{type(exc).__name__}: {exc}", str(path), getattr(exc, "lineno", None)) from None
    return code, linemap


def scan_workflow(snakefile: Path, display_root: Path | None = None) -> ConfigScan:
    """Every config access of `snakefile` and the files it includes (edge: reads files).
    Raises SnakefileSyntaxError when a file does not parse."""
    scan = ConfigScan()
    seen: set[Path] = set()
    pending = [(snakefile.resolve(), None, None)]
    while pending:
        path, parent, parent_line = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        shown = _display(path, display_root)
        if not path.is_file():
            scan.unfollowed.append((_display(parent, display_root) if parent else shown, parent_line,
                                    f"included file {shown} does not exist"))
            continue
        code, linemap = compile_snakefile(path)
        try:
            tree = ast.parse(code)
        except SyntaxError as exc:
            line = linemap.get(exc.lineno or 0, exc.lineno)
            raise SnakefileSyntaxError(exc.msg, str(path), line) from None
        scan.files.append(shown)
        scan.linemaps[shown] = linemap
        result = scan_source(tree, linemap, shown)
        scan.reads.extend(result.reads)
        scan.dynamic.extend(result.dynamic)
        scan.validations.extend((shown, line, schema) for schema, line in result.validations)
        for target, line in result.includes:
            if target is None:
                scan.unfollowed.append((shown, line, "an include path that is not a literal string is not followed"))
            else:
                pending.append(((path.parent / target).resolve(), path, line))
    return scan


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


@dataclass
class SourceScan:
    reads: list[ConfigRead]
    dynamic: list[DynamicAccess]
    includes: list[tuple[str | None, int | None]]  # (literal path or None, Snakefile line)
    validations: list[tuple[str | None, int | None]] = field(default_factory=list)  # (schema path, line)


def scan_source(tree: ast.AST, linemap: dict[int, int], file: str) -> SourceScan:
    """Pure: the config accesses and includes in one compiled Snakefile's AST."""
    visitor = _Visitor(linemap, file, _string_bindings(tree))
    visitor.visit(tree)
    return SourceScan(visitor.reads, visitor.dynamic, visitor.includes, visitor.validations)


def _string_bindings(tree: ast.AST) -> dict[str, list[str]]:
    """Names whose every binding is a string literal or a loop over literal strings: name -> possible values.
    A name bound any other way anywhere is not resolvable."""
    values: dict[str, list[str]] = {}
    spoiled: set[str] = set()

    def bind(target, options):
        if isinstance(target, ast.Name):
            if options is None:
                spoiled.add(target.id)
            else:
                values.setdefault(target.id, []).extend(options)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                bind(elt, None)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            opts = [node.value.value] if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) else None
            for t in node.targets:
                bind(t, opts)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            bind(node.target, None)
        elif isinstance(node, (ast.For, ast.comprehension)):
            it = node.iter
            opts = None
            if isinstance(it, (ast.List, ast.Tuple, ast.Set)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in it.elts):
                opts = [e.value for e in it.elts]
            bind(node.target, opts)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                spoiled.add(a.arg)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None)
    return {k: sorted(set(v)) for k, v in values.items() if k not in spoiled}


def _rule_name(fn: ast.FunctionDef) -> str | None:
    """The rule a compiled `def __rule_x` belongs to, from its `@workflow.rule(name=...)` decorator."""
    for dec in fn.decorator_list:
        if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "rule"
                and isinstance(dec.func.value, ast.Name) and dec.func.value.id == "workflow"):
            for kw in dec.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, linemap: dict[int, int], file: str, bindings: dict[str, list[str]]):
        self.linemap, self.file, self.bindings = linemap, file, bindings
        self.rule: str | None = None
        self.reads: list[ConfigRead] = []
        self.dynamic: list[DynamicAccess] = []
        self.includes: list[tuple[str | None, int | None]] = []
        self.validations: list[tuple[str | None, int | None]] = []

    def _line(self, node) -> int | None:
        n = getattr(node, "lineno", None)
        return self.linemap.get(n, n) if n is not None else None

    # -- chains ---------------------------------------------------------------------------------
    def _keys(self, node: ast.AST) -> list[str] | None:
        """Possible string values of a key expression, or None when unknown."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and node.id in self.bindings:
            return self.bindings[node.id]
        return None

    def _chain(self, node: ast.AST):
        """(prefixes, extra nodes to visit, verdict) when `node` is a config access chain, else None.
        Prefixes is a list because a key bound to several strings gives several paths. The verdict is
        False (fully resolved), True (a key is unknown: dynamic) or "stop" (the path ends at a list index)."""
        if isinstance(node, ast.Name) and node.id == "config":
            return [()], [], False
        if isinstance(node, ast.Subscript):
            inner = self._chain(node.value)
            if inner is None:
                return None
            prefixes, extra, dynamic = inner
            if dynamic:  # True (unknown key earlier) or "stop" (below a list index): keep that verdict
                return prefixes, extra + [node.slice], dynamic
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                return prefixes, extra, "stop"  # an index into a list value: the path ends here
            keys = self._keys(node.slice)
            if keys is None:
                return prefixes, extra + [node.slice], True
            return [p + (k,) for p in prefixes for k in keys], extra, False
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEY_METHODS
                and node.args):
            inner = self._chain(node.func.value)
            if inner is None:
                return None
            prefixes, extra, dynamic = inner
            rest = list(node.args[1:]) + [kw.value for kw in node.keywords]
            if dynamic:
                return prefixes, extra + [node.args[0]] + rest, dynamic
            keys = self._keys(node.args[0])
            if keys is None:
                return prefixes, extra + [node.args[0]] + rest, True
            return [p + (k,) for p in prefixes for k in keys], extra + rest, False
        return None

    def _record(self, node: ast.AST, chain) -> None:
        prefixes, extra, dynamic = chain
        line = self._line(node)
        if dynamic is True:
            for p in prefixes:
                self.dynamic.append(DynamicAccess(p, self.file, line, self.rule, _text(node)))
        elif prefixes == [()]:
            # `config` itself used as a whole (passed on, iterated, unpacked): any key may be read
            self.dynamic.append(DynamicAccess((), self.file, line, self.rule, _text(node), whole=True))
        else:
            for p in prefixes:
                self.reads.append(ConfigRead(p, self.file, line, self.rule))
        for sub in extra:
            self.visit(sub)

    # -- visitors -------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        rule = _rule_name(node)
        if rule is None:
            self.generic_visit(node)
            return
        outer, self.rule = self.rule, rule
        self.generic_visit(node)
        self.rule = outer

    def visit_Subscript(self, node: ast.Subscript) -> None:
        chain = self._chain(node)
        if chain is None:
            self.generic_visit(node)
        else:
            self._record(node, chain)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "include" and isinstance(func.value, ast.Name)
                and func.value.id == "workflow"):
            arg = node.args[0] if node.args else None
            literal = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            self.includes.append((literal, self._line(node)))
        if _is_validate(func) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "config":
            # Snakemake's validate(config, "schema.json") checks the config; it reads no key itself
            arg = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "schema"), None)
            literal = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
            self.validations.append((literal, self._line(node)))
            for sub in node.args[1:] + [k.value for k in node.keywords]:
                self.visit(sub)
            return
        chain = self._chain(node)
        if chain is not None:
            self._record(node, chain)
            return
        if isinstance(func, ast.Name) and func.id in _GENERATED_CALLS and self.rule is not None:
            # the generated call hands `config` to the script; visit everything else
            for arg in node.args:
                if not (isinstance(arg, ast.Name) and arg.id == "config"):
                    self.visit(arg)
            for kw in node.keywords:
                self.visit(kw.value)
            return
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        # "key" in config / "b" in config["a"]
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            chain = self._chain(node.comparators[0])
            keys = self._keys(node.left)
            if chain is not None and chain[2] is False and keys is not None:
                prefixes, extra, _ = chain
                for p in prefixes:
                    for k in keys:
                        self.reads.append(ConfigRead(p + (k,), self.file, self._line(node), self.rule))
                for sub in extra:
                    self.visit(sub)
                return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = self._chain(node.value)
        if chain is not None and node.attr not in _KEY_METHODS:
            self._record(node.value, chain)  # config.items(), config["a"].keys(): the whole (sub)mapping
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "config" and isinstance(node.ctx, ast.Load):
            self._record(node, ([()], [], False))

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "{config[" in node.value:
            for match in _FORMAT_RE.finditer(node.value):
                parts = tuple(p.strip().strip("'\"") for p in _FORMAT_PART_RE.findall(match.group(1)))
                if parts and all(parts):
                    self.reads.append(ConfigRead(parts, self.file, self._line(node), self.rule))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.generic_visit(node)


def _is_validate(func: ast.AST) -> bool:
    """`validate(...)` or `snakemake.utils.validate(...)` / `utils.validate(...)`."""
    return ((isinstance(func, ast.Name) and func.id == "validate")
            or (isinstance(func, ast.Attribute) and func.attr == "validate"
                and isinstance(func.value, (ast.Name, ast.Attribute))))


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - only used in a message
        return "config[...]"
