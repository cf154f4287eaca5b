"""Faithfulness: does a gated draft hold what the researcher said? Pure: text, contract and params in, sentences out.

The gate proves a draft runnable; this says whether it is what was asked.
`stated()` reads the researcher's own messages with the guided dialogue's
parser (guided/parse.py: `request_values`; guided/stated.py: `named_files`, `named_columns`,
`claimed_columns`, `param_numbers`; guided/named.py: `named_values`, a value
next to the param's own words): the files they named, the columns of the
draft's tables they named (to keep, "only", or to leave out, "not"), names
they called columns that the table does not have, allowed values and numbers
attached to a parameter. `differences()` compares those facts with a draft's
params and returns one plain sentence per fact the draft did not take ("you
asked for columns species, body_mass_g; the draft keeps all columns"). An
empty list means faithful; the controller marks any other draft "differs from
the request", and no door shows it as plain ready. Stated facts the draft
keeps, and facts about params the workflow does not have, say nothing.
`NOTE` is what the controller tells the model about such a draft; a reply that
says the note back (`echoes_note`, a small model repeats its instructions) is
replaced by `plain_differences`, so the researcher never reads the
controller's instructions as the model's answer. It
never reads a file (the controller hands it the tables' headers), never
changes a draft, and never decides whether a draft may run: that stays the
gate's and the person's.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from snakegate.agent.guided.named import named_values
from snakegate.agent.guided.parse import item_types, request_values, types_of
from snakegate.agent.guided.stated import claimed_columns, named_columns, named_files, param_numbers


NOTE = ("the draft passed the gate but differs from what the researcher asked; tell them each difference and why, "
        "or validate again with what they asked")
ECHO_WORDS = 5  # this many words of NOTE in a row, in a reply, are the note said back


def _words(text: str) -> list[str]:
    return "".join(ch.lower() if ch.isalnum() else " " for ch in text).split()


def echoes_note(reply: str) -> bool:
    """`reply` says back the controller's NOTE (ECHO_WORDS of its words in a row), instead of the differences."""
    note, said = _words(NOTE), " " + " ".join(_words(reply)) + " "
    return any(" " + " ".join(note[i:i + ECHO_WORDS]) + " " in said for i in range(len(note) - ECHO_WORDS + 1))


def plain_differences(says: list[str] | tuple[str, ...]) -> str:
    """The controller's own words for a gated draft that differs from the request: each difference, then what
    the researcher can do."""
    return ("The draft passed the gate, but it differs from what you asked: " + "; ".join(says)
            + ". Approve it only if that is what you want, or tell me what to change.")


@dataclass(frozen=True)
class Difference:
    """One stated fact the draft does not hold: `kind` file | columns | column | value, and the sentence."""

    kind: str
    param: str | None
    says: str


@dataclass
class Stated:
    """What the researcher's messages state, as far as the parser can tell without guessing."""

    files: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)          # param -> value (enum, name=value, number)
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # table param -> [(column, how)]
    unknown: dict[str, list[str]] = field(default_factory=dict)   # table param -> names called columns it lacks
    headers: dict[str, list[str]] = field(default_factory=dict)   # table param -> its file's columns
    named: dict[str, Any] = field(default_factory=dict)  # column param -> the columns said after its words


def _fmt(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _listed(names: list[str]) -> str:
    return ", ".join(names)


def stated(text: str, params: list[dict], headers: dict[str, list[str]], files: list[str] = ()) -> Stated:
    """The facts `text` (the researcher's messages) states about a workflow with `params` (param_table rows);
    `headers` are the columns of each table param's file in the draft, `files` the data roots' files."""
    out = Stated(files=named_files(text, list(files)), headers=dict(headers))
    found = request_values(text, params)
    by_name = {p["name"]: p for p in params}
    out.values = {k: v for k, v in found.items() if not by_name[k].get("artifact")}
    out.values.update(param_numbers(text, params))
    for name, value in named_values(text, params, headers).items():  # "signal ROI 8 16 12 20", "2 threads"
        # a column param of a table whose header is known is compared by the column facts below
        if by_name[name].get("column_of") in headers:
            out.named[name] = value
        else:
            out.values.setdefault(name, value)
    for table, header in headers.items():
        out.columns[table] = named_columns(text, header)
        # a param's own name in a list ("label column y, test_size 0.3") is no column
        out.unknown[table] = [c for c in claimed_columns(text)
                              if c not in header and c not in by_name and _column_like(c, header)]
    return out


def _column_like(name: str, header: list[str]) -> bool:
    """A name called a column that is no everyday word: it has an underscore, a digit or capitals, or is close
    to a real column's name (a typo)."""
    return (any(ch == "_" or ch.isdigit() for ch in name) or name != name.lower()
            or bool(difflib.get_close_matches(name, header, n=1, cutoff=0.75)))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b or (isinstance(a, str) and str(b) == a) or (isinstance(b, str) and str(a) == b)


def _takes(value: Any, named: str) -> bool:
    """A draft value reads the named file: the same path, or one ending in the name the researcher typed."""
    if isinstance(value, list):
        return any(_takes(v, named) for v in value)
    if isinstance(value, dict):  # a file inside a list of objects: a sample's reads
        return any(_takes(v, named) for v in value.values())
    if not isinstance(value, str) or not value:
        return False
    a, b = value.removeprefix("./"), named.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _suffix(path: str) -> str:
    parts = path.rsplit("/", 1)[-1].lower().split(".")
    return ".".join(parts[-2:]) if parts[-1] == "gz" and len(parts) > 2 else parts[-1] if len(parts) > 1 else ""


def _file_differences(facts: Stated, params: list[dict], draft: dict) -> list[Difference]:
    artifacts = {p["name"]: draft.get(p["name"]) for p in params if p.get("artifact") and p["name"] in draft}
    nested = [draft[p["name"]] for p in params if p["name"] in draft and "object" in item_types(p)]
    out = []
    for named in facts.files:
        if any(_takes(v, named) for v in [*artifacts.values(), *nested]):
            continue
        # the param this file would feed: one whose draft file has the same kind of name (.csv, .fq.gz)
        fits = [(name, v) for name, v in artifacts.items() if isinstance(v, str) and _suffix(v) == _suffix(named)]
        if any(_takes(v, other) for name, v in fits for other in facts.files):
            continue  # the researcher named several such files and the draft reads one of them
        if fits:
            name, value = fits[0]
            out.append(Difference("file", name, f"you named {named}; the draft reads {value} instead ({name})"))
        else:
            out.append(Difference("file", None, f"you named {named}; the draft does not read it"))
    return out


def _column_differences(facts: Stated, params: list[dict], draft: dict) -> list[Difference]:
    out = []
    for table, mentions in facts.columns.items():
        col_params = [p for p in params if p.get("column_of") == table]
        if not col_params:
            continue
        lists = [p for p in col_params if "array" in types_of(p)]
        used: set[str] = set()
        for p in col_params:
            v = draft.get(p["name"])
            used.update(x for x in (v if isinstance(v, list) else [v]) if isinstance(x, str))
        scalars = [p for p in col_params if p not in lists]
        held = {draft.get(p["name"]) for p in scalars}
        # "label column quality_class" is about a one-column param when the workflow has one
        single = [c for c, how in mentions if how == "column" and scalars and c not in held]
        asked = [c for c, how in mentions if how == "only" or (how == "column" and not scalars)]
        wanted = [c for c in asked if c not in used]
        if single:
            out.append(_not_used(single, scalars, draft))
        if wanted and lists:
            kept = [draft.get(p["name"]) for p in lists if isinstance(draft.get(p["name"]), list)]
            now = (f"the draft keeps only {_listed(kept[0])}" if kept else "the draft keeps all columns")
            out.append(Difference("columns", lists[0]["name"], f"you asked for columns {_listed(asked)}; {now}"))
        elif wanted:
            out.append(_not_used(wanted, col_params, draft))
        dropped = [c for c, how in mentions if how == "not"]
        if dropped and lists:
            kept_all = not any(isinstance(draft.get(p["name"]), list) for p in lists)
            still = [c for c in dropped if kept_all or c in used]
            if still:
                out.append(Difference("columns", lists[0]["name"],
                                      f"you asked to leave out {_listed(still)}; the draft keeps "
                                      + ("all columns" if kept_all else _listed(still))))
    for table, names in facts.unknown.items():
        if not [p for p in params if p.get("column_of") == table] or not names:
            continue
        file = draft.get(table)
        for name in names:
            close = difflib.get_close_matches(name, facts.headers.get(table, []), n=1)
            out.append(Difference("column", None, f"you named column {name}, which {file} does not have; the draft "
                                                  "leaves it out" + (f" (did you mean {close[0]}?)" if close else "")))
    return out


def _not_used(names: list[str], col_params: list[dict], draft: dict) -> Difference:
    shown = "; ".join(f"{p['name']} is {_fmt(draft[p['name']])}" for p in col_params if p["name"] in draft)
    them = "them" if len(names) > 1 else "it"
    return Difference("columns", col_params[0]["name"],
                      f"you named column{'s' if len(names) > 1 else ''} {_listed(names)}; the draft does not use "
                      f"{them}" + (f" ({shown})" if shown else ""))


def _value_differences(facts: Stated, params: list[dict], draft: dict) -> list[Difference]:
    out = []
    by_name = {p["name"]: p for p in params}
    for name, value in facts.values.items():
        if name not in by_name or by_name[name].get("sensitive"):
            continue  # a sensitive value is never repeated in a sentence that reaches a model or a log
        if name in draft and _same(value, draft[name]):
            continue
        default = by_name[name].get("default", object())
        now = (f"the draft keeps the default, {_fmt(draft[name])}" if name in draft and _same(default, draft[name])
               else f"the draft has {_fmt(draft[name])}" if name in draft else "the draft leaves it out")
        out.append(Difference("value", name, f"you asked for {name} {_fmt(value)}; {now}"))
    return out


def differences(text: str, params: list[dict], draft: dict, headers: dict[str, list[str]],
                files: list[str] = ()) -> list[Difference]:
    """Each fact `text` states that the draft's `draft` params do not hold, as a sentence; [] when faithful."""
    facts = stated(text, params, headers, files)
    return (_file_differences(facts, params, draft) + _column_differences(facts, params, draft)
            + _value_differences(facts, params, draft))
