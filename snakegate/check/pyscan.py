"""Pure AST scans for the workflow reader: one compiled Snakefile, or one Python script, in; plain facts out.

A Snakefile is first translated to Python by Snakemake's own parser (in
`snakegate.check.reading`); here its AST is walked for: config reads
(`config["k"]`, `.get`, `"k" in config`, `{config[k]}` in strings,
`lookup(dpath="a/b", within=config)`), dynamic accesses, `validate(config, ...)`,
`include:`, `module` and `configfile:` directives, `workflow.source_path(...)`,
and each rule's directives (named/unnamed input and output, script, wrapper,
conda, notebook, shell text, literal strings). A script's AST is walked for
`snakemake.config[...]` reads and the string literals it opens or fetches.
Nothing is read from disk and nothing is executed here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from snakegate.check.ioexpr import Bindings, bindings
from snakegate.check.rulescan import RuleSource, directive
from snakegate.check.rulescan import joined as _joined
from snakegate.check.rulescan import literal as _literal
from snakegate.check.rulescan import text as _text
from snakegate.check.shellscripts import shipped_file

# Calls Snakemake's parser generates inside a rule's function; they pass the whole config on.
_GENERATED_CALLS = frozenset({"script", "notebook", "wrapper", "cwl", "template_engine"})
_KEY_METHODS = frozenset({"get", "setdefault", "pop"})
_FORMAT_RE = re.compile(r"\{config((?:\[[^\[\]{}]+\])+)")
_FORMAT_PART_RE = re.compile(r"\[([^\[\]]+)\]")
_WILDCARD = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class ConfigRead:
    """One statically resolved read: `path` is the key path, e.g. ('model', 'C')."""

    path: tuple[str, ...]
    file: str
    line: int | None
    rule: str | None
    how: str = "config"  # config | lookup | script | module


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
class SourceScan:
    reads: list[ConfigRead] = field(default_factory=list)
    dynamic: list[DynamicAccess] = field(default_factory=list)
    # (literal path or None, line, glob pattern of a path built from config: "rules/*.smk" or None)
    includes: list[tuple[str | None, int | None, str | None]] = field(default_factory=list)
    validations: list[tuple[str | None, int | None]] = field(default_factory=list)  # (schema path, line)
    configfiles: list[tuple[str | None, int | None]] = field(default_factory=list)
    # configfile: named from the Snakefile's folder: (anchor "basedir" | "source", path, line); shellscripts.shipped_file
    anchored_configfiles: list[tuple[str, str, int | None]] = field(default_factory=list)
    # (name, snakefile literal or None, config key path: () for `config`, None when not the outer config, line)
    modules: list[tuple[str, str | None, tuple | None, int | None]] = field(default_factory=list)
    source_paths: list[tuple[str, int | None]] = field(default_factory=list)
    rules: list[RuleSource] = field(default_factory=list)
    opened: list[tuple[str, int | None]] = field(default_factory=list)  # scripts: literal paths opened/read
    strings: list[tuple[str, int | None]] = field(default_factory=list)  # scripts: every string literal
    other_validations: list[tuple[str | None, int | None]] = field(default_factory=list)  # validate(df, schema)
    tables: list[tuple[tuple, int | None]] = field(default_factory=list)  # config keys read as pd.read_csv(config[k])
    # glob_wildcards("data/{x}.txt") / glob.glob("*.csv") on a literal pattern: (pattern, line, rule)
    globs: list[tuple[str, int | None, str | None]] = field(default_factory=list)
    # top-level modules imported (absolute imports only) outside a try that catches ImportError
    imports: list[tuple[str, int | None]] = field(default_factory=list)
    names: Bindings = field(default_factory=Bindings)  # top-level lists, glob results and functions (ioexpr)


def string_bindings(tree: ast.AST) -> dict[str, list[str]]:
    """Names whose every binding is a string literal or a loop over literal strings: name -> values."""
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


def _workflow_call(node, names) -> str | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "workflow"):
        return node.func.attr
    return None


class Scanner(ast.NodeVisitor):
    """Walks one compiled Snakefile (script=False) or one Python script (script=True)."""

    def __init__(self, linemap: dict[int, int], file: str, bindings: dict[str, list[str]], script: bool = False):
        self.linemap, self.file, self.bindings, self.script = linemap, file, bindings, script
        self.rule: RuleSource | None = None
        self.out = SourceScan()
        self.guarded: set[int] = set()  # imports a try/except ImportError already copes with

    def line(self, node) -> int | None:
        n = getattr(node, "lineno", None)
        return self.linemap.get(n, n) if n is not None else None

    @property
    def rule_name(self) -> str | None:
        return self.rule.name if self.rule else None

    # -- config chains ------------------------------------------------------------------------------
    def _is_root(self, node) -> bool:
        if self.script:  # snakemake.config in a script
            return (isinstance(node, ast.Attribute) and node.attr == "config" and isinstance(node.value, ast.Name)
                    and node.value.id == "snakemake")
        return isinstance(node, ast.Name) and node.id == "config"

    def _keys(self, node) -> list[str] | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and node.id in self.bindings:
            return self.bindings[node.id]
        return None

    def _chain(self, node):
        """(prefixes, extra nodes to visit, verdict) for a config access chain, else None. Verdict: False
        (resolved), True (an unknown key: dynamic) or "stop" (the path ends at a list index)."""
        if self._is_root(node):
            return [()], [], False
        if isinstance(node, ast.Subscript):
            inner = self._chain(node.value)
            if inner is None:
                return None
            prefixes, extra, dynamic = inner
            if dynamic:
                return prefixes, extra + [node.slice], dynamic
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                return prefixes, extra, "stop"
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

    def _read(self, path: tuple, node, how: str = "config") -> None:
        self.out.reads.append(ConfigRead(path, self.file, self.line(node), self.rule_name,
                                         "script" if self.script else how))

    def _record(self, node, chain) -> None:
        prefixes, extra, dynamic = chain
        if dynamic is True:
            for p in prefixes:
                self.out.dynamic.append(DynamicAccess(p, self.file, self.line(node), self.rule_name, _text(node)))
        elif prefixes == [()]:
            self.out.dynamic.append(DynamicAccess((), self.file, self.line(node), self.rule_name, _text(node), whole=True))
        else:
            for p in prefixes:
                self._read(p, node)
        for sub in extra:
            self.visit(sub)

    # -- imports ------------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        if id(node) not in self.guarded:
            self.out.imports.extend((alias.name.split(".")[0], self.line(node)) for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not node.level and node.module and id(node) not in self.guarded:
            self.out.imports.append((node.module.split(".")[0], self.line(node)))

    # -- rules --------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        rule = _rule_of(node, self)
        if rule is None:
            self.generic_visit(node)
            return
        outer, self.rule = self.rule, rule
        self.out.rules.append(rule)
        for dec in node.decorator_list:
            kind = dec.func.attr if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) else None
            names = [None] * len(dec.args) + [k.arg for k in dec.keywords] if isinstance(dec, ast.Call) else []
            for sub, name in zip(directive(rule, dec, self.line), names):
                before = len(self.out.reads)
                self.visit(sub)
                rule.config_reads.extend((kind, name, read.path) for read in self.out.reads[before:])
        for stmt in node.body:
            self.visit(stmt)
        self.rule = outer

    # -- calls --------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        kind = _workflow_call(node, ("include", "configfile", "module", "source_path"))
        if kind == "include":
            target = _literal(node.args[0]) if node.args else None
            self.out.includes.append((target, self.line(node), None if target or not node.args else
                                      _include_pattern(node.args[0])))
        elif kind == "configfile":
            shipped = shipped_file(node.args[0]) if node.args and _literal(node.args[0]) is None else None
            if shipped is not None and shipped[0] != "workdir":  # os.path.join(workflow.basedir, "defaults/x.yaml")
                self.out.anchored_configfiles.append((shipped[0], shipped[1], self.line(node)))
            else:
                self.out.configfiles.append((_literal(node.args[0]) if node.args else None, self.line(node)))
        elif kind == "source_path" and node.args and _literal(node.args[0]):
            self.out.source_paths.append((_literal(node.args[0]), self.line(node)))
        elif kind == "module":
            self._module(node)
            return
        if _is_validate(func) and node.args:
            arg = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "schema"), None)
            if self._is_root(node.args[0]):
                self.out.validations.append((_schema_path(arg), self.line(node)))
                for sub in node.args[1:] + [k.value for k in node.keywords]:
                    self.visit(sub)
                return
            self.out.other_validations.append((_schema_path(arg), self.line(node)))
        if isinstance(func, ast.Attribute) and func.attr in ("read_csv", "read_table") and node.args:
            chain = self._chain(node.args[0])
            if chain is not None and chain[2] is False:
                self.out.tables.extend((p, self.line(node)) for p in chain[0] if p)
        if not self.script and _is_glob(func) and node.args and _literal(node.args[0]):
            self.out.globs.append((_literal(node.args[0]), self.line(node), self.rule_name))
        if isinstance(func, ast.Name) and func.id == "lookup" and self._lookup(node):
            return
        if self.script and node.args and _is_reader(func) and _looks_like_path(_literal(node.args[0])):
            self.out.opened.append((_literal(node.args[0]), self.line(node)))
        chain = self._chain(node)
        if chain is not None:
            self._record(node, chain)
            return
        if isinstance(func, ast.Name) and func.id in _GENERATED_CALLS and self.rule is not None:
            for arg in node.args:
                if not (isinstance(arg, ast.Name) and arg.id == "config"):
                    self.visit(arg)
            for kw in node.keywords:
                self.visit(kw.value)
            return
        self.generic_visit(node)

    def _module(self, node: ast.Call) -> None:
        kws = {k.arg: k.value for k in node.keywords}
        name = _literal(kws.get("name")) or "?"
        snakefile = _literal(kws.get("snakefile")) if "snakefile" in kws else None
        mapped = None
        if "config" in kws:
            chain = self._chain(kws["config"])
            if chain is not None and chain[2] is False and len(chain[0]) == 1:
                mapped = chain[0][0]
                if mapped:  # module gets config["x"]: that reads x
                    self._read(mapped, node, "module")
            else:
                self.visit(kws["config"])
        self.out.modules.append((name, snakefile, mapped, self.line(node)))

    def _lookup(self, node: ast.Call) -> bool:
        """lookup(dpath="a/{w}/b", within=config): a read of a/…; a {wildcard} segment is any key there."""
        kws = {k.arg: k.value for k in node.keywords}
        within = kws.get("within")
        if within is None or not self._is_root(within):
            return False
        dpath = _joined(kws.get("dpath")) if "dpath" in kws else None
        if dpath is None:
            self.out.dynamic.append(DynamicAccess((), self.file, self.line(node), self.rule_name, _text(node)))
            return True
        parts = [p for p in dpath.split("/") if p]
        fixed = []
        for part in parts:
            if _WILDCARD.search(part):
                self.out.dynamic.append(DynamicAccess(tuple(fixed), self.file, self.line(node), self.rule_name,
                                                      _text(node)))
                break
            fixed.append(part)
        else:
            if fixed:
                self._read(tuple(fixed), node, "lookup")
        for key, value in kws.items():
            if key not in ("within", "dpath"):
                self.visit(value)
        return True

    def visit_Subscript(self, node: ast.Subscript) -> None:
        chain = self._chain(node)
        if chain is None:
            self.generic_visit(node)
        else:
            self._record(node, chain)

    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            chain = self._chain(node.comparators[0])
            keys = self._keys(node.left)
            if chain is not None and chain[2] is False and keys is not None:
                for p in chain[0]:
                    for k in keys:
                        self._read(p + (k,), node)
                for sub in chain[1]:
                    self.visit(sub)
                return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.script and self._is_root(node):
            self._record(node, ([()], [], False))
            return
        chain = self._chain(node.value)
        if chain is not None and node.attr not in _KEY_METHODS:
            self._record(node.value, chain)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not self.script and node.id == "config" and isinstance(node.ctx, ast.Load):
            self._record(node, ([()], [], False))

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        if self.script:
            self.out.strings.append((node.value, self.line(node)))
        if "{config[" in node.value:
            for match in _FORMAT_RE.finditer(node.value):
                parts = tuple(p.strip().strip("'\"") for p in _FORMAT_PART_RE.findall(match.group(1)))
                if parts and all(parts):
                    self._read(parts, node)


def _rule_of(fn: ast.FunctionDef, scanner: Scanner) -> RuleSource | None:
    for dec in fn.decorator_list:
        if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "rule"
                and isinstance(dec.func.value, ast.Name) and dec.func.value.id == "workflow"):
            kws = {k.arg: k.value for k in dec.keywords}
            name = kws.get("name")
            line = kws.get("lineno")
            if isinstance(name, ast.Constant):
                lineno = line.value if isinstance(line, ast.Constant) else None
                return RuleSource(str(name.value), scanner.file, scanner.linemap.get(lineno, lineno))
    return None


def _is_validate(func) -> bool:
    return ((isinstance(func, ast.Name) and func.id == "validate")
            or (isinstance(func, ast.Attribute) and func.attr == "validate"
                and isinstance(func.value, (ast.Name, ast.Attribute))))


def _include_pattern(node) -> str | None:
    """`include: f"rules/{config['mode']}.smk"` (or "rules/" + config["mode"] + ".smk") as the glob rules/*.smk:
    every file it can name is read. None when no literal part says where (include: config["file"])."""
    def parts(n) -> str:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            return parts(n.left) + parts(n.right)
        text = _joined(n)
        return text.replace("{}", "*") if text is not None else "*"
    pattern = re.sub(r"\*+", "*", parts(node))
    literal_part = pattern.replace("*", "")
    if "*" not in pattern or not literal_part or ("/" not in literal_part and "." not in literal_part):
        return None
    return pattern


def _schema_path(arg) -> str | None:
    """validate()'s schema: "schemas/x.yaml" or workflow.source_path("schemas/x.yaml"), both relative to the file."""
    if arg is not None and _workflow_call(arg, ("source_path",)) and arg.args:
        return _literal(arg.args[0])
    return _literal(arg) if arg is not None else None


def _is_glob(func) -> bool:
    """glob_wildcards(...), glob.glob(...), glob.iglob(...) or a bare glob(...): a listing of the working folder."""
    if isinstance(func, ast.Name):
        return func.id in ("glob_wildcards", "glob", "iglob")
    return (isinstance(func, ast.Attribute) and func.attr in ("glob", "iglob") and isinstance(func.value, ast.Name)
            and func.value.id == "glob")


_READERS = re.compile(r"^(open|read_\w+|load\w*|loadtxt|genfromtxt|fromfile|imread|Path|VariantFile|AlignmentFile|"
                      r"FastaFile|parse|urlopen|urlretrieve|get)$")


def _is_reader(func) -> bool:
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return bool(name and _READERS.match(name))


_PATHLIKE = re.compile(r"^(?:[a-z]+://\S+|[\w.~-]*/[\w./~-]+|[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5})$")


def _looks_like_path(text: str | None) -> bool:
    """A literal that names a file or URL (a/b, x.csv, https://...), not a key or a column name."""
    return bool(text) and " " not in text and bool(_PATHLIKE.match(text))


def scan(tree: ast.AST, linemap: dict[int, int], file: str, script: bool = False) -> SourceScan:
    """Pure: everything the reader wants from one AST."""
    scanner = Scanner(linemap, file, string_bindings(tree), script=script)
    scanner.guarded = _guarded_imports(tree)
    scanner.visit(tree)
    if not script and isinstance(tree, ast.Module):
        scanner.out.names = bindings(tree)
    return scanner.out


_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _guarded_imports(tree: ast.AST) -> set[int]:
    """The import statements inside a `try:` whose handlers catch an import failure (an optional import)."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = set()
        for handler in node.handlers:
            kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            caught |= {"Exception" if k is None else getattr(k, "id", getattr(k, "attr", "")) for k in kinds}
        if caught & _IMPORT_ERRORS:
            guarded |= {id(sub) for stmt in node.body for sub in ast.walk(stmt)
                        if isinstance(sub, (ast.Import, ast.ImportFrom))}
    return guarded
