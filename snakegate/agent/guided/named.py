"""Values a request gives a parameter by naming it in words (issue 26 §1): pure, no state, no I/O.

`named_values` reads "signal ROI 8 16 12 20" (numbers after the param's words), "500 bootstrap samples"
(a count before them), "a minimum mapping quality of 30" (min_mapq spelled by the words' beginnings),
"feature columns Fe, Ni, Co and Cr" and "power column P_uW" (columns after them), "target hardness_hv"
(one word of the name, for a column the table is known to have), "only gene and exon features" (allowed
items before the name's first word) and "sample alpha from reads/alpha.fq.gz" (an item of a list of
objects: its name and its file). `files_as` reads "using reads/alpha.fq.gz as the reference": a file the
researcher gave a file param in words, whether or not it fits (the caller says why it does not).
"predicting tensile_strength" names the column a target or label param holds, whether or not the table has
it (the gate then names the table's columns); `misplaced_file` gives a named file of a type no param takes
to the one file param nothing else fills ("the variants in reference.fa"), so the reply names the mistake.

It never guesses: a value is read only next to the param's own words, of the param's type, each item
checked against the contract (enum, pattern, bounds) and a column against the known header, or a name no
everyday word is; what is left unread is asked or left to the model. Enum, file and `name=value` values
are guided/parse.request_values', "seed 42" guided/stated.param_numbers'; the gate checks every value.
"""

from __future__ import annotations

import re
from typing import Any

from snakegate.agent.guided.parse import FILLER, NUM, claims, fits, item_types, to_number, types_of
from snakegate.agent.guided.stated import NEGATIONS, SELECTING, named_files

_IDENT = r"[A-Za-z_][\w.\-]*[A-Za-z0-9_]|[A-Za-z]"
_SEP = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)"
_LEAD = r"\s*(?:=|:|\bof\b|\bis\b|\bto\b|\bas\b)?\s*"
_ONLY = r"\b(?:only|just)\s+"
_FILE = r"[^\s,;]+"
_TARGETS = {"target", "targets", "label", "response", "outcome"}   # the words of a param naming what is predicted
_PREDICT = r"(?<![\w-])(?:predict(?:s|ing|ed)?|to\s+predict)(?:\s+the)?(?:\s+columns?)?(?![\w-])"


def _forms(word: str) -> str:
    """A regex for `word` in the singular or the plural ("columns", "column"; "properties", "property")."""
    if word.endswith("ies"):
        stem = word[:-3]
        return rf"{re.escape(stem)}(?:y|ies)"
    if word.endswith("s") and len(word) > 3:
        return rf"{re.escape(word[:-1])}s?"
    if word.endswith("y"):
        return rf"{re.escape(word[:-1])}(?:y|ies)"
    return rf"{re.escape(word)}s?"


def _cue(name: str) -> str | None:
    """A regex for the param's words as a researcher writes them ("signal_roi" -> "signal ROI", "n_bootstrap"
    -> "bootstrap"); a one-letter part is no word."""
    words = [w for w in name.lower().split("_") if len(w) > 1]
    if not words:
        return None
    return r"(?<![\w./-])" + r"[_\s]+".join([re.escape(w) for w in words[:-1]] + [_forms(words[-1])]) + r"(?![\w/-])"


def _ok_item(item: Any, spec: dict, header: list[str] | None, short: bool, column: bool = False) -> bool:
    """An item as the contract's items allow it: in its enum, matching its pattern; a column of `header`
    when the cue was one word of the name (`short`); for a `column`, one of `header` or a name no everyday
    word is ("P_uW", "Fe": "columns except sex" names no column "except")."""
    if isinstance(item, str):
        if item.lower() in FILLER | NEGATIONS | SELECTING:
            return False
        if isinstance(spec.get("enum"), list) and item not in spec["enum"]:
            return False
        if isinstance(spec.get("pattern"), str) and not re.search(spec["pattern"], item):
            return False
        if short or column:
            return (header is not None and item in header) or (not short and _column_like(item))
        return True
    return isinstance(item, (int, float)) and not isinstance(item, bool) and \
        not (isinstance(spec.get("minimum"), (int, float)) and item < spec["minimum"]) and \
        not (isinstance(spec.get("maximum"), (int, float)) and item > spec["maximum"])


def _column_like(name: str) -> bool:
    return any(ch == "_" or ch.isdigit() for ch in name) or name != name.lower()


def _names_after(text: str) -> list[str]:
    """The list of names `text` starts with ("Fe, Ni, Co and Cr, target ..." -> Fe, Ni, Co, Cr): an item
    reached by a comma and followed by another word starts a new phrase, so it is no item; one reached by
    "and" is the last."""
    out: list[str] = []
    pos, joined_by_and = 0, False
    while True:
        m = re.match(rf"[`'\"]?({_IDENT})[`'\"]?", text[pos:])
        if not m:
            return out
        end = pos + m.end()
        if out and not joined_by_and and re.match(r"\s+[A-Za-z]", text[end:]) and \
                not re.match(rf"{_SEP}", text[end:]):
            return out  # "…, target hardness_hv": "target" opens the next phrase
        out.append(m.group(1))
        if joined_by_and:
            return out
        sep = re.match(_SEP, text[end:])
        if not sep:
            return out
        joined_by_and = "and" in sep.group(0).lower() or "&" in sep.group(0)
        pos = end + sep.end()


def _numbers_after(text: str) -> list[int | float]:
    """The run of numbers `text` starts with ("8 16 12 20, background ..."); a later number followed by a
    word opens the next phrase ("24 and 500 bootstrap samples": 500 is no item)."""
    out: list[int | float] = []
    pos = 0
    while True:
        m = re.match(rf"(?:\s*,\s*|\s+(?:and\s+)?)({NUM})" if out else rf"({NUM})", text[pos:])
        end = pos + m.end() if m else pos
        if not m or re.match(r"[A-Za-z_/]|\.\w", text[end:end + 2]):
            return out  # "8x", "v2/..": no number of this list
        if out and re.match(r"\s+(?!and\b)[A-Za-z]", text[end:]):
            return out
        out.append(to_number(m.group(1)))
        pos = end


def _after(text: str, p: dict, cue: str, header: list[str] | None, short: bool) -> Any:
    """The value written right after the cue, as the param's type allows, or None."""
    types = types_of(p)
    for m in re.finditer(cue + _LEAD, text, re.I):
        rest = text[m.end():]
        if "array" in types and {"integer", "number"} & set(item_types(p)):
            values = _numbers_after(rest)
            if values and all(_ok_item(v, p.get("items") or {}, None, False) for v in values) and \
                    ("integer" not in item_types(p) or all(isinstance(v, int) for v in values)):
                return values
        elif "array" in types and "string" in item_types(p):
            names = _names_after(rest)
            if names and all(_ok_item(n, p.get("items") or {}, header, short, bool(p.get("column_of")))
                             for n in names):
                return names
        elif "string" in types and p.get("column_of") and "enum" not in p:
            names = _names_after(rest)[:1]
            if names and _ok_item(names[0], p, header, short, True):
                return names[0]
    return None


def _count_before(text: str, p: dict, cue: str) -> int | float | None:
    """"500 bootstrap samples", "2 threads": a number written right before the param's words."""
    for m in re.finditer(rf"(?<![\w.])({NUM})\s+{cue}", text, re.I):
        value = to_number(m.group(1))
        if ("integer" not in types_of(p) or isinstance(value, int)) and _ok_item(value, p, None, False):
            return value
    return None


def _spell(rest: str, words: list[str], i: int, n: int) -> bool:
    """`rest` is spelled by the beginnings of words[i:n], in order: the first word gives at least three
    letters, each later one at least one."""
    if i == n:
        return rest == ""
    least = 1 if i else 3
    return any(words[i].startswith(rest[:k]) and _spell(rest[k:], words, i + 1, n)
               for k in range(least, min(len(rest), len(words[i])) + 1))


def _spells(part: str, words: list[str]) -> int:
    """How many of `words` (1 to 3) spell `part` by their beginnings ("mapq": "mapping quality" -> 2); a
    part of one or two letters ("c", "n") only as a word of its own; 0 when they do not."""
    if len(part) <= 2:
        return 1 if words and words[0] == part else 0
    return next((n for n in range(1, min(3, len(words)) + 1) if _spell(part, words, 0, n)), 0)


def _spelled_number(text: str, p: dict) -> int | float | None:
    """"a minimum mapping quality of 30" for min_mapq: the param's name spelled by the beginnings of the words
    before the number, each part of the name starting a word; the number within the contract's bounds."""
    parts = [w for w in p["name"].lower().split("_") if w]
    for m in re.finditer(rf"({NUM})(?![\w.])", text):
        before = re.findall(r"[A-Za-z]+", text[max(0, m.start() - 80):m.start()].lower())
        before = before[:-1] if before and before[-1] in ("of", "is", "to", "at", "as") else before
        for start in range(max(0, len(before) - 3 * len(parts)), len(before)):
            i = start
            for part in parts:
                used = _spells(part, before[i:])
                if not used:
                    break
                i += used
            else:
                if i == len(before) and before[start] not in FILLER:
                    value = to_number(m.group(1))
                    if ("integer" not in types_of(p) or isinstance(value, int)) and _ok_item(value, p, None, False):
                        return value
    return None


def _only_before(text: str, p: dict) -> list[str] | None:
    """"only gene and exon features": allowed items between "only" and the first word of the param's name."""
    words = [w for w in p["name"].lower().split("_") if len(w) > 1]
    if not words:
        return None
    for m in re.finditer(rf"{_ONLY}((?:{_IDENT})(?:{_SEP}(?:{_IDENT}))*)\s+{_forms(words[0])}(?![\w/-]|\.\w)",
                         text, re.I):
        names = [n for n in re.split(_SEP, m.group(1)) if n]
        if names and all(_ok_item(n, p.get("items") or {}, None, False) for n in names):
            return names
    return None


def _objects(text: str, p: dict) -> list[dict] | None:
    """"sample alpha from reads/alpha.fq.gz": items of a list of objects that have one name and one file
    (their other fields keep their defaults); the file must fit the item's file type."""
    spec = p.get("items") or {}
    props = spec.get("properties") or {}
    files = [k for k, v in props.items() if isinstance(v, dict) and v.get("x-artifact")]
    names = [k for k, v in props.items() if isinstance(v, dict) and k not in files and "string" in types_of(v)]
    if len(files) != 1 or len(names) != 1 or set(spec.get("required") or []) - {files[0], names[0]}:
        return None
    cue = _cue(p["name"])
    out = []
    for m in re.finditer(rf"{cue}\s+[`'\"]?({_IDENT})[`'\"]?\s+(?:from|in|with|at|:)\s+({_FILE})", text, re.I):
        name, path = m.group(1), m.group(2).strip(".,;:!?()\"'`")
        if _ok_item(name, props[names[0]], None, False) and fits(path, props[files[0]]["x-artifact"]):
            out.append({names[0]: name, files[0]: path})
    return out or None


def named_values(text: str, params: list[dict], headers: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """{param: value} for each param `text` gives a value by naming it (see the module docstring); `params` are
    param_table rows, `headers` {table param: its file's columns} where known. File, enum and sensitive params
    are not read here."""
    headers = headers or {}
    found: dict[str, Any] = {}
    for p in params:
        if p.get("artifact") or p.get("sensitive") or "enum" in p or not isinstance(p.get("name"), str):
            continue
        cue = _cue(p["name"])
        if cue is None:
            continue
        header = headers.get(p["column_of"]) if isinstance(p.get("column_of"), str) else None
        types = types_of(p)
        if "array" in types and "object" in item_types(p):
            value = _objects(text, p)
        elif {"integer", "number"} & set(types):
            value = _count_before(text, p, cue)
            value = _spelled_number(text, p) if value is None else value
        else:
            value = _after(text, p, cue, header, False)
            first = p["name"].split("_")[0]
            if value is None and p.get("column_of") and header and len(first) > 1 and first != p["name"]:
                value = _after(text, p, _cue(first), header, True)  # "target hardness_hv", a known column
            if value is None and p.get("column_of") and _TARGETS & set(p["name"].lower().split("_")):
                value = _after(text, p, _PREDICT, header, False)  # "predicting tensile_strength", known or not
            if value is None and "array" in types and "string" in item_types(p) and not p.get("column_of"):
                value = _only_before(text, p)
        if value is not None:
            found[p["name"]] = value
    return found


def files_as(text: str, params: list[dict]) -> dict[str, str]:
    """{file param: path} for "<path> as the <param's words>" ("alpha.fq.gz as the reference"): what the
    researcher said, whether or not the file's type fits the param (that is for the caller to say)."""
    found: dict[str, str] = {}
    for p in params:
        cue = _cue(p["name"]) if isinstance(p.get("name"), str) and p.get("artifact") and \
            not p.get("sensitive") else None
        m = re.search(rf"({_FILE})\s+as\s+(?:the\s+|my\s+|a\s+|an\s+)?{cue}", text, re.I) if cue else None
        path = m.group(1).strip(".,;:!?()\"'`") if m else ""
        if "/" in path or re.search(r"\.[A-Za-z]\w{0,5}$", path):
            found[p["name"]] = path
    return found


def _kinds(path: str) -> set[str]:
    return {kind for _, kind in claims(path)}


def misplaced_file(text: str, params: list[dict], taken: set[str]) -> dict[str, str]:
    """{file param: path} for the one file the researcher named whose type fits no file param of the workflow
    (nor a file inside its list of objects), when exactly one file param is left that nothing they said fills
    (`taken`): "annotate the variants in reference.fa" gives the FASTA to the VCF param, so the reply says why
    it does not fit instead of asking for the VCF as if nothing had been said."""
    wanted = {p["name"]: p["artifact"] for p in params if isinstance(p.get("artifact"), str) and not p.get("sensitive")}
    nested = {v["x-artifact"] for p in params for v in ((p.get("items") or {}).get("properties") or {}).values()
              if isinstance(v, dict) and isinstance(v.get("x-artifact"), str)}
    kinds = set(wanted.values()) | nested
    odd = [f for f in named_files(text) if _kinds(f) and not _kinds(f) & kinds]
    left = [name for name in wanted if name not in taken]
    return {left[0]: odd[0]} if len(odd) == 1 and len(left) == 1 else {}
