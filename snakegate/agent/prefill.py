"""What the researcher stated, as param values a draft starts from; and which data files fit which param.

A small model drops what it was told (a column list, "fill gaps with the median", the researcher's own
file). `prefilled()` turns the facts faithful.py reads from the researcher's messages into param values:
a named file that is in the data roots and fits exactly one file param by its type, or that they gave a
file param in words ("alpha.fq.gz as the reference": the gate then says why it does not fit), or the one
file of a type no param takes, given to the one file param nothing else fills ("the variants in
reference.fa"); an allowed value, a `name=value` or a number attached to a param; a value written next to
the param's own words
("signal ROI 8 16 12 20", "feature columns Fe, Ni", "500 bootstrap samples": guided/named.py); the
columns they asked to keep ("only species and body_mass_g") for the workflow's column list, in the order
they said them; "label column quality_class" for its one single-column param. The controller puts them
into a validate_params call wherever the model left the param out, so the model fills only the rest; a
value the model did give stands, and faithful.py says when it differs. What it cannot tell without
guessing (two params the file could feed, a column said in passing, "not X") it leaves out.

`candidates()` says which data files fit each file param by their name's extension (a FASTA is not a
FASTQ); `chosen_tables()` which file each table param reads now (stated, in the draft, or the model's
own last try), so a constrained step can offer only that table's columns. Pure: names and headers in,
values out; reads no file, never decides whether a draft may run (the gate does).
"""

from __future__ import annotations

import re
from typing import Any

from snakegate.agent.faithful import stated
from snakegate.agent.guided.named import files_as, misplaced_file
from snakegate.agent.guided.parse import claims, types_of
from snakegate.agent.guided.stated import named_files


def fits(path: str, kind: Any) -> bool:
    """`path`'s name ends in an extension of `kind` and in none that is longer and of another type
    (`x.fa.gz` is fasta.gz, not fasta's `.fa`): strict, where guided.parse.fits lets an unclaimed name through."""
    found = claims(path)
    longest = max((n for n, _ in found), default=0)
    return isinstance(kind, str) and (longest, kind) in found


def candidates(params: list[dict], files: list[str]) -> dict[str, list[str]]:
    """{file param: the data files whose name fits its type}; a type that names no extension, or one no
    file fits, keeps every file (the gate reads the content and says)."""
    out = {}
    for p in params:
        if not isinstance(p.get("artifact"), str) or p.get("sensitive"):
            continue
        fitting = [f for f in files if fits(f, p["artifact"])]
        out[p["name"]] = fitting or list(files)
    return out


def in_roots(named: str, files: list[str]) -> str | None:
    """The one data file `named` (a path or a file name the researcher typed) is, or None."""
    named = named.removeprefix("./")
    if named in files:
        return named
    found = [f for f in files if f.endswith("/" + named)]
    return found[0] if len(found) == 1 else None


def stated_files(text: str, params: list[dict], files: list[str]) -> dict[str, str]:
    """{file param: data file} for each file the researcher named that is in the data roots and fits exactly
    one file param by its type, when that param has exactly one such file."""
    named = {f for f in (in_roots(n, files) for n in named_files(text, files)) if f}
    takers = {f: [p["name"] for p in params if not p.get("sensitive") and fits(f, p.get("artifact"))] for f in named}
    out: dict[str, str] = {}
    for p in params:
        mine = sorted(f for f, names in takers.items() if names == [p["name"]])
        if len(mine) == 1:
            out[p["name"]] = mine[0]
    return out


def table_params(params: list[dict]) -> list[str]:
    """The file params whose columns another param names (`x-column-of`), in schema order."""
    aims = {p.get("column_of") for p in params} | {(p.get("keys") or {}).get("x-column-of")
                                                   for p in params if isinstance(p.get("keys"), dict)}
    return [p["name"] for p in params if p["name"] in aims]


def chosen_tables(params: list[dict], *sources: dict) -> dict[str, str]:
    """{table param: file} from the first of `sources` ({param: value} dicts, in order of trust: the stated
    files, the draft's params, the model's last try, the only fitting file) that gives it a string."""
    out = {}
    for table in table_params(params):
        value = next((s[table] for s in sources if isinstance(s.get(table), str) and s[table]), None)
        if value is not None:
            out[table] = value
    return out


def _position(text: str, column: str) -> int:
    m = re.search(rf"(?<![\w.\-/]){re.escape(column)}(?![\w\-/]|\.\w)", text)
    return m.start() if m else len(text)


def prefilled(text: str, params: list[dict], headers: dict[str, list[str]], files: list[str]) -> dict[str, Any]:
    """{param: value} the researcher's messages (`text`) state for a workflow with `params` (param_table rows),
    with `headers` the columns of each table param's chosen file and `files` the data roots' files."""
    facts = stated(text, params, headers, files)
    by_name = {p["name"]: p for p in params}
    out: dict[str, Any] = dict(stated_files(text, params, files))
    for name, named in files_as(text, params).items():  # "alpha.fq.gz as the reference": said, fit or not
        if in_roots(named, files):
            out[name] = in_roots(named, files)  # a file of the wrong type: the gate refuses it by name
    for name, named in misplaced_file(text, params, set(out)).items():  # "the variants in reference.fa"
        if in_roots(named, files):
            out[name] = in_roots(named, files)
    out.update({k: v for k, v in {**facts.named, **facts.values}.items()
                if k in by_name and not by_name[k].get("sensitive")})
    for table, mentions in facts.columns.items():
        col_params = [p for p in params if p.get("column_of") == table and not p.get("sensitive")]
        lists = [p for p in col_params if "array" in types_of(p)]
        scalars = [p for p in col_params if p not in lists]
        single = [c for c, how in mentions if how == "column" and scalars]
        asked = [c for c, how in mentions if how == "only" or (how == "column" and not scalars)]
        if len(scalars) == 1 and len(single) == 1 and scalars[0]["name"] not in out:
            out[scalars[0]["name"]] = single[0]
        if lists and asked and lists[0]["name"] not in out:
            out[lists[0]["name"]] = sorted(asked, key=lambda c: _position(text, c))
    return out
