"""One rule's directives as written (pure): the decorators Snakemake's parser makes of `input:`, `output:`,
`script:`, `wrapper:`, `conda:`, `shell:`, ... turned into a `RuleSource`. Used by `snakegate.check.pyscan`;
nothing is read or executed here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from snakegate.check.ioexpr import describe
from snakegate.check.shellscripts import StartedScript, shipped_file, started_scripts

# Rule directives whose argument is one literal: the name Snakemake's parser gives the decorator.
_SINGLE = {"script": "script", "wrapper": "wrapper", "conda": "conda", "notebook": "notebook", "cwl": "cwl"}


@dataclass
class RuleSource:
    """One rule as written: what the reader can know without building a DAG."""

    name: str
    file: str
    line: int | None
    named_input: list[str] = field(default_factory=list)
    named_output: list[str] = field(default_factory=list)
    unnamed_input: int = 0  # positional arguments of input:
    unnamed_output: int = 0
    script: str | None = None
    wrapper: str | None = None
    conda: str | None = None
    notebook: str | None = None
    shell: list[str] = field(default_factory=list)
    literals: list[tuple[str, str, int | None]] = field(default_factory=list)  # (directive, text, line)
    default_target: bool = False
    # input/output name (or _1, _2 by position) -> first literal path in it (None: a function, lookup, ...)
    paths: dict[str, dict[str, str | None]] = field(default_factory=lambda: {"input": {}, "output": {}})
    # input name -> (rule, "output", name) when written as rules.<rule>.output.<name>
    refs: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    threads: str | None = None  # the `threads:` expression as written
    resources: dict[str, str] = field(default_factory=dict)  # `resources:` name -> expression as written
    # (directive, keyword or None when positional, config key path) for each config read inside a directive:
    # ("params", "label", ("label",)) for `params: label=config["label"]`
    config_reads: list[tuple[str, str | None, tuple]] = field(default_factory=list)
    plain_inputs: list[str] = field(default_factory=list)  # inputs given as a plain string literal
    # input/output name -> the argument as written (snakegate.check.ioexpr.describe), for draft to evaluate
    sources: dict[str, dict[str, tuple]] = field(default_factory=lambda: {"input": {}, "output": {}})
    unpacked: list[tuple] = field(default_factory=list)  # input: unpack(f): what f is (names come from f)
    params: list[str] = field(default_factory=list)  # the names of `params:`
    unnamed_params: int = 0
    params_unpacked: bool = False  # params: **mapping: names the reader cannot know
    # input name (or _1, _2 by position) -> (anchor, path) of a file it names that the reader can follow
    # (snakegate.check.shellscripts.shipped_file), for the scripts a shell: command starts through {input.x}
    shipped: dict[str, tuple[str, str]] = field(default_factory=dict)
    started: list[StartedScript] = field(default_factory=list)  # scripts the shell: command starts
    directories: list[str] = field(default_factory=list)  # outputs written as directory("...")
    inputs_unpacked: bool = False  # input: **mapping: names the reader cannot know (zika's merge_metadata)



def literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def joined(node) -> str | None:
    """A literal string, or adjacent literals / an f-string flattened to its literal parts."""
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return literal(node)


def directive(rule: RuleSource, dec, line) -> list:
    """Record one `@workflow.<directive>(...)` decorator on `rule`; return the expressions still to scan
    for config reads. `line` maps a node to its Snakefile line."""
    kind = dec.func.attr if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) else None
    if kind in ("input", "output"):
        for arg in dec.args:
            if kind == "input" and describe(arg)[0] == "unpack":  # names (or positions) come from the function
                rule.unpacked.append(describe(arg)[1])
            elif kind == "input":
                rule.unnamed_input += 1
                rule.paths[kind][f"_{rule.unnamed_input}"] = _first_literal(arg)
                rule.sources[kind][f"_{rule.unnamed_input}"] = describe(arg)
                _note_shipped(rule, f"_{rule.unnamed_input}", arg)
                if literal(arg) is not None:
                    rule.plain_inputs.append(f"_{rule.unnamed_input}")
            else:
                for path in _positional_outputs(arg):
                    rule.unnamed_output += 1
                    if _is_directory(arg):
                        rule.directories.append(f"_{rule.unnamed_output}")
                    rule.paths[kind][f"_{rule.unnamed_output}"] = path
                    rule.sources[kind][f"_{rule.unnamed_output}"] = ("literal", path) if path else describe(arg)
        rule.inputs_unpacked |= kind == "input" and any(kw.arg is None for kw in dec.keywords)
        for kw in dec.keywords:
            if kw.arg is not None:
                (rule.named_input if kind == "input" else rule.named_output).append(kw.arg)
                rule.paths[kind][kw.arg] = _first_literal(kw.value)
                rule.sources[kind][kw.arg] = describe(kw.value)
                if kind == "input":
                    _note_shipped(rule, kw.arg, kw.value)
                elif _is_directory(kw.value):
                    rule.directories.append(kw.arg)
                if kind == "input" and literal(kw.value) is not None:
                    rule.plain_inputs.append(kw.arg)
                ref = _rule_ref(kw.value)
                if ref:
                    rule.refs[kw.arg] = ref
        if kind == "output":
            for arg in dec.args:  # multiext("p", a=".x", b=".y") names its outputs
                rule.named_output.extend(_multiext_names(arg))
                for name, path in _multiext_paths(arg).items():
                    rule.paths["output"][name] = path
                    rule.sources["output"][name] = ("literal", path)
    elif kind in _SINGLE and dec.args:
        setattr(rule, _SINGLE[kind], literal(dec.args[0]) or text(dec.args[0]))
    elif kind == "shellcmd" and dec.args:
        command = joined(dec.args[0])
        if command is not None:
            rule.shell.append(command)
            rule.started.extend(started_scripts(command))
    elif kind == "threads" and dec.args:
        rule.threads = ast.unparse(dec.args[0])
    elif kind == "params":
        rule.params.extend(kw.arg for kw in dec.keywords if kw.arg)
        rule.params_unpacked |= any(kw.arg is None for kw in dec.keywords)
        rule.unnamed_params += len(dec.args)
    elif kind == "resources":
        rule.resources.update({kw.arg: ast.unparse(kw.value) for kw in dec.keywords if kw.arg})
    elif kind in ("default_target", "default_target_rule") and dec.args:  # the latter: what Snakemake's parser writes
        rule.default_target = bool(getattr(dec.args[0], "value", False))
    if kind in ("input", "output", "params", "log", "shellcmd", "conda", "resources"):
        for sub in ast.walk(dec):
            value = literal(sub)
            if value is not None:
                rule.literals.append((kind, value, line(sub)))
    if isinstance(dec, ast.Call):
        return list(dec.args) + [k.value for k in dec.keywords]
    return []



def _is_directory(node) -> bool:
    """directory("x"), also inside other flags: temp(directory("x"))."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id == "directory":
            return True
        node = node.args[0]
    return False


def _note_shipped(rule: RuleSource, name: str, node) -> None:
    found = shipped_file(node)
    if found is not None:
        rule.shipped[name] = found


def _positional_outputs(arg) -> list[str | None]:
    """The first literal path of each unnamed file one positional output argument makes: multiext("x", ".a",
    ".b") makes x.a and x.b, multiext with names makes none."""
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "multiext":
        base = literal(arg.args[0]) if arg.args else None
        return [] if arg.keywords else [base + (literal(ext) or "") if base is not None else None
                                        for ext in arg.args[1:]]
    return [_first_literal(arg)]


def _first_literal(node) -> str | None:
    """The first literal string inside an input/output argument ("a.bam", expand("x/{s}.bam", ...), temp("y"))."""
    if isinstance(node, ast.Lambda):
        return None
    for sub in ast.walk(node):
        text = joined(sub)
        if text is not None:
            return text
    return None


def _rule_ref(node) -> tuple[str, str, str] | None:
    """rules.<rule>.output.<name> -> (rule, "output", name)."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Attribute) and isinstance(node.value.value.value, ast.Name)
            and node.value.value.value.id == "rules" and node.value.attr in ("output", "input")):
        return node.value.value.attr, node.value.attr, node.attr
    return None


def _multiext_paths(arg) -> dict[str, str]:
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "multiext" and arg.args:
        base = literal(arg.args[0]) or ""
        return {k.arg: base + (literal(k.value) or "") for k in arg.keywords if k.arg}
    return {}


def _multiext_names(arg) -> list[str]:
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "multiext":
        return [k.arg for k in arg.keywords if k.arg]
    return []


def text(node) -> str:
    """The source of an expression, for messages."""
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - only used in a message
        return "config[...]"
