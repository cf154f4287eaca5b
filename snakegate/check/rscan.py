"""Pure scan of an R rule script (`script: "x.R"`, or an R Markdown one) for what the check needs: config reads
through the `snakemake` S4 object, the literal paths the script reads, and every string literal.

Recognised, as Snakemake's R scripts write them: `snakemake@config[["a"]]`, `snakemake@config[['a']][["b"]]`,
`snakemake@config$a`, `snakemake@config$a$b`, `` snakemake@config$`a b` `` and mixes of the two; a key held in
a variable (`snakemake@config[[key]]`) or the whole config (`cfg <- snakemake@config`) is a dynamic access,
as in Python. `snakemake@params`, `@input`, `@output`, `@wildcards` are the rule's own slots and read no
config; the names read from `snakemake@params` are listed, so the check can hold them to the rule's params.
Comments are left out. Text in, plain data out: nothing is read from disk or run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# One access step after `snakemake@config`: [["key"]] / [['key']], [[name]] (dynamic), $key, $`key`.
_STEP = re.compile(r"""\s*(?:\[\[\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^\]\n]*?))\s*\]\]|\$\s*(?:`([^`\n]+)`|([A-Za-z.][\w.]*)))""")
_ROOT = re.compile(r"\bsnakemake\s*@\s*config\b")
_STRING = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
# Functions that read a file named by their first argument (base R, readr, data.table, arrow, jsonlite, yaml).
_READERS = re.compile(r"\b(read\.(?:csv2?|table|delim2?|fwf)|read_(?:csv2?|tsv|delim|table|lines|rds|parquet|"
                      r"feather|excel|xlsx)|readRDS|readLines|readxl::read_excel|fread|load|source|file|scan|"
                      r"fromJSON|read_json|read_yaml|yaml\.load_file)\s*\(\s*(\"[^\"\n]*\"|'[^'\n]*')")
_PARAMS = re.compile(r"""\bsnakemake\s*@\s*params\s*"""
                     r"""(?:\[\[\s*(?:"([^"\n]+)"|'([^'\n]+)')\s*\]\]|\$\s*([A-Za-z.][\w.]*))""")
_PATHLIKE = re.compile(r"^(?:[a-z]+://\S+|[\w.~-]*/[\w./~-]+|[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5})$")


@dataclass
class RScan:
    reads: list[tuple[tuple[str, ...], int]] = field(default_factory=list)  # (key path, line)
    dynamic: list[tuple[tuple[str, ...], int, str, bool]] = field(default_factory=list)  # (prefix, line, text, whole)
    opened: list[tuple[str, int]] = field(default_factory=list)  # literal paths read, with their line
    strings: list[tuple[str, int]] = field(default_factory=list)  # every string literal, with its line
    params_read: list[tuple[str, int]] = field(default_factory=list)  # snakemake@params[["x"]] / $x: (name, line)


def strip_comment(line: str) -> str:
    """The line without its `#` comment (a `#` inside a string literal stays)."""
    out, quote = [], None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote and line[i - 1] != "\\":
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch == "#":
            break
        out.append(ch)
    return "".join(out)


def scan_r(text: str) -> RScan:
    """Config reads, literal paths read and string literals of one R script (pure)."""
    found = RScan()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw)
        for root in _ROOT.finditer(line):
            path: list[str] = []
            pos, dynamic = root.end(), False
            while True:
                step = _STEP.match(line, pos)
                if step is None:
                    break
                key = next((g for i, g in enumerate(step.groups()) if g is not None and i != 2), None)
                if key is None:  # [[name]]: a key the scan cannot resolve
                    dynamic = True
                    pos = step.end()
                    break
                path.append(key)
                pos = step.end()
            shown = line[root.start():pos].strip()
            if dynamic or not path:
                found.dynamic.append((tuple(path), n, shown, not path and not dynamic))
            else:
                found.reads.append((tuple(path), n))
        found.params_read.extend((next(g for g in m.groups() if g), n) for m in _PARAMS.finditer(line))
        for m in _READERS.finditer(line):
            literal = m.group(2)[1:-1]
            if literal and " " not in literal and _PATHLIKE.match(literal):
                found.opened.append((literal, n))
        found.strings.extend((m.group(1)[1:-1], n) for m in _STRING.finditer(line) if len(m.group(1)) > 2)
    return found
