"""What a request states, for the faithfulness check (agent/faithful.py): pure functions, no state, no I/O.

The file paths and names a researcher's text names, the columns of a table it names (and how: "only",
"not", "column", in passing), the names it calls columns whether or not the table has them, and numbers
attached to a numeric param by its name. It never decides what a draft should hold: faithful.py compares.
"""

from __future__ import annotations

import re

from snakegate.agent.guided.parse import FILLER, NUM, to_number, types_of, unquote

# Extensions a researcher's data usually has; a word ending in one of these (or holding a "/") is a file name.
DATA_SUFFIXES = {"csv", "tsv", "txt", "json", "yaml", "yml", "fa", "fasta", "fna", "fq", "fastq", "vcf", "bam",
                 "bed", "gff", "gtf", "npz", "npy", "h5", "hdf5", "xlsx", "parquet", "tif", "tiff", "png", "dat"}
NEGATIONS = {"not", "no", "without", "except", "excluding", "exclude", "drop", "ignore", "ignoring", "minus"}
SELECTING = {"only", "just", "keep", "keeping", "select", "selecting", "columns"}
_SENTENCE = re.compile(r"[.;!?\n](?:\s|$)")
_IDENT = r"[`'\"]?[A-Za-z_][\w.\-]*[`'\"]?"
_LIST_SEP = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)"
_COLUMN_LIST = re.compile(rf"\bcolumns?\b(?:\s+(?:named|called))?\s*:?\s*({_IDENT}(?:{_LIST_SEP}{_IDENT})*)", re.I)


def _suffix(word: str) -> str:
    parts = word.rsplit("/", 1)[-1].lower().split(".")
    if len(parts) < 2:
        return ""
    return parts[-2] if parts[-1] == "gz" and len(parts) > 2 else parts[-1]


def named_files(text: str, known: list[str] = ()) -> list[str]:
    """The file paths and names the text names, in order, once each: a word holding a "/" with a file
    extension, a word ending in a data extension (`reads.fq.gz`, `x.csv`), a file of `known` (the data
    roots' files) by its path or name. `name=value` counts its value; URLs and numbers ("0.05") are none."""
    known_names = {p.rsplit("/", 1)[-1] for p in known}
    suffixes = DATA_SUFFIXES | {_suffix(p) for p in known if _suffix(p)}
    out: list[str] = []
    for raw in text.split():
        word = raw.partition("=")[2] if "=" in raw else raw
        word = word.strip(".,;:!?()[]{}\"'`")
        if not word or "://" in word or word in out:
            continue
        suffix = _suffix(word)
        if word in known or word in known_names or (suffix and suffix[0].isalpha() and suffix in suffixes):
            out.append(word.removeprefix("./"))
    return out


def _clause_before(text: str, at: int) -> list[str]:
    """The words of the sentence before position `at`, lower case."""
    start = max((m.end() for m in _SENTENCE.finditer(text, 0, at)), default=0)
    return [w.strip(".,;:!?()\"'`").lower() for w in text[start:at].split()]


def named_columns(text: str, columns: list[str]) -> list[tuple[str, str]]:
    """Each column of `columns` the text names, as (column, how): "not" when the nearest marker word before
    it in its sentence is a negation ("without island", "keep species, not sex"), "only" when it is a
    selecting word ("only species and island", "columns a, b"), "column" when it is the word column ("label
    column quality_class"), else "named" (said in passing)."""
    out = []
    for col in columns:
        # a whole word: not part of a longer name, a path ("data/species/") or a file name ("species.csv")
        m = re.search(rf"(?<![\w.\-/]){re.escape(col)}(?![\w\-/]|\.\w)", text)
        if not m:
            continue
        marker = next((w for w in reversed(_clause_before(text, m.start()))
                       if w in NEGATIONS | SELECTING | {"column"}), None)
        out.append((col, "not" if marker in NEGATIONS else "only" if marker in SELECTING else
                    "column" if marker == "column" else "named"))
    return out


def claimed_columns(text: str) -> list[str]:
    """The names the text calls columns ("columns species, bill_len and body_mass_g", "the column
    `quality_class`"), whether or not the table has them: where a wrong column name shows."""
    out: list[str] = []
    for m in _COLUMN_LIST.finditer(text):
        for name in re.split(_LIST_SEP, m.group(1).strip()):
            name = unquote(name.strip().rstrip(".")).strip()
            if name.lower() in NEGATIONS:  # "columns a, b, not c": the list ends where the negation starts
                break
            if name and name.lower() not in FILLER | {"as", "named", "called"} and name not in out:
                out.append(name)
    return out


def param_numbers(text: str, params: list[dict]) -> dict[str, int | float]:
    """{param: number} for a number the text attaches to a numeric param by its name ("seed 42",
    "test_size of 0.3", "test size 30 %": a percentage of a param at most 1 becomes 0.3). The last mention
    counts: a researcher correcting themselves says the new value last."""
    found: dict[str, int | float] = {}
    for p in params:
        if not {"integer", "number"} & set(types_of(p)):
            continue
        name = re.escape(p["name"]).replace("_", "[_ ]")
        for m in re.finditer(rf"(?<![\w.]){name}\s*(?:=|:|\bof\b|\bis\b|\bto\b|\bat\b)?\s*({NUM})\s*(%)?",
                             text, re.I):
            value = to_number(m.group(1))
            if m.group(2) and isinstance(p.get("maximum"), (int, float)) and p["maximum"] <= 1:
                value = value / 100
            found[p["name"]] = value
    return found
