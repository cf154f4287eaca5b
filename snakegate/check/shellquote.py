"""Proof: no free-text string param reaches a `shell:` command unquoted.

Snakemake pastes `{params.label}` into a shell command as it is; only `{params.label:q}` quotes it. A
string param the contract does not restrict (no `enum`/`const`, no anchored `pattern` admitting only
characters a shell passes through as text) that reaches a shell command unquoted lets a value like
`hello; touch X` run a command, whoever typed it: the researcher, or the model that drafted it and had it
approved. Found, per rule, through the reader's facts (`RuleSource.shell` and `RuleSource.config_reads`):
- `{params.NAME}` (or `{params}`, `{params[0]}`) without `:q`, where that param reads such a config key;
- `{config[key]}` without `:q`;
- a config read inside the `shell:` expression itself (an f-string or `.format` pastes it when the Snakefile
  is read, and no `:q` can quote it).
`unquoted_shell_params` is the finding as an error for the `curated` tier and a warning for `community`.
Pure: facts in, findings out; `exposed_params` and `unsafe_for_shell` are the same facts for the chat's draft
panel and the MCP confirmation, and `exposed_in_folder` is their one edge (it parses the workflow with the
check's reader, never runs it).
"""

from __future__ import annotations

import functools
import json
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snakegate.check.facts import Finding, WorkflowFacts, subschema

try:  # the regular-expression parser re itself uses; named sre_parse before Python 3.11
    from re import _parser as _sre  # noqa: PLC2701
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]

# Characters a shell passes through as part of a word: nothing here separates commands, expands or quotes.
SAFE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/=+-@%")
_FIELD = re.compile(r"\{([^{}]*)\}")
_KEY = re.compile(r"\[([^\[\]]*)\]")


@dataclass(frozen=True)
class Exposure:
    """One config key that reaches one rule's shell command unquoted."""

    path: tuple[str, ...]  # config key path, e.g. ("label",)
    rule: str
    file: str
    line: int | None
    how: str  # as written: "{params.label}", "{config[label]}", or "an f-string"


def unquoted_shell_params(f: WorkflowFacts) -> list[Finding]:
    if f.source is None or f.schema is None:
        return []
    curated = f.trust == "curated"
    out = []
    for exposure in exposed_params(f.source.rules, f.schema):
        name = ".".join(exposure.path)
        fix = (f"write `{exposure.how[:-1]}:q}}` so Snakemake quotes it, or " if exposure.how.startswith("{")
               else "pass it through params: and write `{params.<name>:q}` in the command, or ")
        out.append(Finding(
            "error" if curated else "warning", f.id, "unquoted_shell_param",
            f"rule `{exposure.rule}` puts the string param `{name}` into its shell command as {exposure.how} "
            f"without quoting, and schema.json lets it hold any text: a value like `x; touch pwned` runs a "
            f"command ({'an error for the curated' if curated else 'a warning for the community'} tier)",
            hint=fix + f"restrict `{name}` in schema.json with an `enum` or an anchored `pattern` such as "
                       "`^[A-Za-z0-9_.-]+$`",
            rule=exposure.rule, file=exposure.file, line=exposure.line))
    return out


def exposed_params(rules, schema: dict) -> list[Exposure]:
    """Every (config key, rule) whose free-text value reaches the rule's shell command unquoted."""
    out: dict[tuple, Exposure] = {}
    for rule in rules:
        for path, how in _unquoted_reads(rule):
            node = subschema(schema, path)
            if node is not None and admits_free_text(node):
                out.setdefault((path, rule.name), Exposure(path, rule.name, rule.file, rule.line, how))
    return list(out.values())


def _unquoted_reads(rule) -> list[tuple[tuple, str]]:
    """(config path, how) for each config read that reaches `rule`'s shell text without `:q`."""
    params: dict[str | None, list[tuple]] = {}
    fields = [field for text in rule.shell for field in _fields(text)]
    formatted = {_config_path(field) for field, _ in fields if field.startswith("config[")}
    found = []
    for kind, name, path in rule.config_reads:
        if kind == "params":
            params.setdefault(name, []).append(path)
        elif kind == "shellcmd" and path not in formatted:  # `{config[k]}` in the text is Snakemake's, below
            found.append((path, "an f-string or .format() (pasted when the Snakefile is read)"))
    for field, quoted in fields:
        if quoted:
            continue
        root, _, rest = field.partition(".")
        keys = _KEY.findall(field)
        if field == "params":
            found.extend((p, "{params}") for paths in params.values() for p in paths)
        elif root == "params" and rest:
            found.extend((p, f"{{params.{rest}}}") for p in params.get(re.split(r"[.\[]", rest)[0], []))
        elif field.startswith("params[") and keys:
            key = keys[0].strip("'\"")
            name = None if key.isdigit() else key
            found.extend((p, f"{{{field}}}") for p in params.get(name, []))
        elif field.startswith("config[") and keys:
            found.append((_config_path(field), f"{{{field}}}"))
    return found


def _config_path(field: str) -> tuple:
    return tuple(k.strip().strip("'\"") for k in _KEY.findall(field))


def _fields(text: str) -> list[tuple[str, bool]]:
    """(field name, quoted with :q) for each replacement field of a Snakemake shell command."""
    try:
        return [(name.strip(), "q" in (spec or "")) for _, name, spec, _ in string.Formatter().parse(text)
                if name is not None and name.strip()]
    except ValueError:  # unbalanced braces: read the fields one by one
        out = []
        for match in _FIELD.finditer(text):
            name, _, spec = match.group(1).partition(":")
            out.append((name.split("!")[0].strip(), "q" in spec))
        return [(n, q) for n, q in out if n]


def admits_free_text(schema: Any) -> bool:
    """Can a value valid under this (sub)schema hold a string with a character a shell would interpret?"""
    if not isinstance(schema, dict):
        return schema is not False
    if "enum" in schema or "const" in schema:
        return False
    branches = (schema.get("anyOf") or []) + (schema.get("oneOf") or [])
    if branches and not any(admits_free_text(b) for b in branches):
        return False
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds is None or "string" in kinds:
        if not safe_pattern(schema.get("pattern")):
            return True
    if kinds is None or "array" in kinds:
        items = schema.get("items", {} if kinds is not None else None)
        if items is not None and admits_free_text(items):
            return True
    if kinds is not None and "object" in kinds:
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if any(admits_free_text(p) for p in props.values()):
            return True
        if isinstance(extra, dict) and admits_free_text(extra):
            return True
        if extra is True or (extra is None and not props and not schema.get("patternProperties")):
            return True  # a free-form mapping: its values may be any text
    return False


def safe_pattern(pattern: Any) -> bool:
    """Is `pattern` anchored at both ends (^...$ or \\A...\\Z) with every character it can match in SAFE_CHARS?
    (`$` also matches before a final newline, which ends a command but cannot start another.)"""
    if not isinstance(pattern, str):
        return False
    try:
        parsed = list(_sre.parse(pattern))
    except Exception:  # noqa: BLE001 - a pattern Python cannot read proves nothing
        return False
    if len(parsed) < 2 or parsed[0][0] is not _sre.AT or parsed[-1][0] is not _sre.AT:
        return False
    if parsed[0][1] not in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING):
        return False
    if parsed[-1][1] not in (_sre.AT_END, _sre.AT_END_STRING):
        return False
    return _only_safe(parsed)


def _only_safe(items) -> bool:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            if chr(arg) not in SAFE_CHARS:
                return False
        elif name == "IN":
            if not _class_safe(arg):
                return False
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if not _only_safe(arg[2]):
                return False
        elif name == "SUBPATTERN":
            if not _only_safe(arg[-1]):
                return False
        elif name == "BRANCH":
            if not all(_only_safe(branch) for branch in arg[1]):
                return False
        elif name == "ATOMIC_GROUP":
            if not _only_safe(arg):
                return False
        elif name in ("AT", "GROUPREF", "ASSERT", "ASSERT_NOT"):
            continue  # anchors and lookarounds consume nothing; a back-reference repeats what was proven
        else:
            return False  # ANY (`.`), NOT_LITERAL, conditionals, ...: may match anything
    return True


def _class_safe(items) -> bool:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and chr(arg) in SAFE_CHARS:
            continue
        if name == "RANGE" and all(chr(c) in SAFE_CHARS for c in range(arg[0], arg[1] + 1)):
            continue
        if name == "CATEGORY" and str(arg) in ("CATEGORY_DIGIT", "CATEGORY_WORD"):
            continue  # \d, \w: digits, letters and _ (other scripts' letters are text to a shell too)
        return False
    return True


def unsafe_for_shell(value: Any) -> bool:
    """Does `value` (or any string inside it) hold a character a shell would interpret?"""
    if isinstance(value, str):
        return not all(c.isalnum() or c in SAFE_CHARS for c in value)
    if isinstance(value, dict):
        return any(unsafe_for_shell(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(unsafe_for_shell(v) for v in value)
    return False


def exposed_in_folder(folder: Path, schema: dict | None) -> frozenset[str]:
    """Top-level params of the workflow in `folder` whose free text reaches a shell command unquoted, read
    with the check's reader (parsed, never run); empty when the workflow cannot be read."""
    if not isinstance(schema, dict):
        return frozenset()
    try:
        stamp = tuple(sorted((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in Path(folder).rglob("*")
                             if p.is_file() and p.suffix in ("", ".smk", ".py")
                             and "test" not in p.relative_to(folder).parts))
    except OSError:
        return frozenset()
    return _exposed_cached(str(folder), stamp, json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _exposed_cached(folder: str, stamp: tuple, schema_text: str) -> frozenset[str]:
    from snakegate.check.reading import SnakefileSyntaxError, read_workflow

    try:
        source = read_workflow(Path(folder))
    except (SnakefileSyntaxError, OSError, ValueError):
        return frozenset()
    return frozenset(e.path[0] for e in exposed_params(source.rules, json.loads(schema_text)))
