"""What a workflow's `config.yaml` says in its comments, read from the text (pure): for `snakegate draft`.

- A key's description: its end-of-line comment (`threads: 4  # cores per job`), else the block of comment
  lines right above it at its indentation.
- Commented-out keys: a comment line that is itself a `key: value` line (`# min_quality: 20`,
  `#adapters: [AGATC]`) is an optional key the workflow knows; it is declared, with the value as an example.
  Prose (`# Note: see the docs`) is not: the key must be lower-case snake/kebab case and the value a
  number, a boolean, a list, nothing, or one word. A note naming a key as optional (`# branch_confidence
  [optional] minimum confidence of ...`, as Nextstrain's builds write them) declares it too, described by the note.
- Placeholders: a value the author left to be filled (`TODO`, `FIXME`, `CHANGEME`, `<path/to/file>`,
  `/path/to/...`) is listed, so draft warns instead of making it a default.

Only block-style mappings are read (flow mappings and multi-line strings are skipped). Text in, plain data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML, YAMLError

_KEY_LINE = re.compile(r"^(\s*)([^\s#:][^#:]*?|\"[^\"]*\"|'[^']*'):(?:\s+(.*?))?\s*$")
_COMMENTED_KEY = re.compile(r"^(\s*)#\s?([a-z_][a-z0-9_-]*):(?:\s+(.*?))?\s*$")
# Nextstrain's builds: "# branch_confidence [optional] minimum confidence of ..." names an optional key
_OPTIONAL_NOTE = re.compile(r"^(\s*)#\s?([a-z_][a-z0-9_-]*)\s+[\[(]optional[\])]:?\s*(.*?)\s*$", re.I)
MAX_LINE = 2000
_PLACEHOLDER = re.compile(r"^(?:todo|fixme|changeme|tbd|xxx+|<[^>]*>|/?path/to/.*|.*\bTODO\b.*)$", re.I)


@dataclass
class ConfigNotes:
    descriptions: dict[tuple, str] = field(default_factory=dict)
    commented: dict[tuple, Any] = field(default_factory=dict)  # key path -> example value
    placeholders: list[tuple] = field(default_factory=list)


def _split_comment(rest: str) -> tuple[str, str | None]:
    """(value, comment) of the text after `key:`: a ` #` outside quotes starts the comment."""
    quote = None
    for i, ch in enumerate(rest):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1].isspace()):
            return rest[:i].rstrip(), rest[i + 1:].strip()
    return rest, None


def _scalar(text: str) -> tuple[bool, Any]:
    try:
        value = YAML(typ="safe", pure=True).load(text) if text else None
    except YAMLError:
        return False, None
    if isinstance(value, str) and (" " in value.strip() or not value.strip()):
        return False, None  # prose, not a value
    return not isinstance(value, dict), value


def read_notes(text: str) -> ConfigNotes:
    notes = ConfigNotes()
    stack: list[tuple[int, str]] = []  # (indent, key) of the open mappings
    block: list[str] = []
    block_indent = None

    def parent(indent: int) -> tuple:
        while stack and stack[-1][0] >= indent:
            stack.pop()
        return tuple(key for _, key in stack)

    for raw in text.splitlines():
        if len(raw) > MAX_LINE:  # a key line is short; a huge one is data (or hostile) and would only cost time
            block, block_indent = [], None
            continue
        if not raw.strip() or raw.lstrip().startswith("---"):
            block, block_indent = [], None
            continue
        optional = _OPTIONAL_NOTE.match(raw)
        if optional:  # a key the workflow reads when given: declared, its note the description, no example
            path = parent(len(optional.group(1))) + (optional.group(2),)
            notes.commented.setdefault(path, None)
            if optional.group(3):
                notes.descriptions[path] = optional.group(3)
            block, block_indent = [], None
            continue
        commented = _COMMENTED_KEY.match(raw)
        if commented:
            ok, value = _scalar((commented.group(3) or "").strip())
            if ok:
                indent = len(commented.group(1))
                path = parent(indent) + (commented.group(2),)
                notes.commented[path] = value
                if block and block_indent == indent:  # "# minimum base quality" above "# min_quality: 20"
                    notes.descriptions[path] = " ".join(b for b in block if b)
                block, block_indent = [], None
                continue
        stripped = raw.strip()
        if stripped.startswith("#"):
            indent = len(raw) - len(raw.lstrip())
            if block_indent not in (None, indent):
                block = []
            block.append(stripped.lstrip("#").strip())
            block_indent = indent
            continue
        line = _KEY_LINE.match(raw)
        if line is None or raw.lstrip().startswith("-"):
            block, block_indent = [], None
            continue
        indent, key = len(line.group(1)), line.group(2).strip("\"'")
        value, comment = _split_comment(line.group(3) or "")
        path = parent(indent) + (key,)
        above = " ".join(b for b in block if b) if block_indent == indent else ""
        said = " ".join(part for part in (above, comment) if part)
        if said:
            notes.descriptions[path] = said
        if value and _PLACEHOLDER.match(value.strip("\"'")):
            notes.placeholders.append(path)
        if not value:
            stack.append((indent, key))
        block, block_indent = [], None
    return notes
