"""The guided dialogue's reading of what the researcher typed: pure functions, no state, no I/O.

Turns an answer into a value of the parameter's type (numbers pick from a
numbered list, yes/no, lists, JSON or `name=value` objects, bounds such as
"Cr between 15 and 30" or "Cr.max=25"), checks what can be checked without
the gate (allowed values, ranges, columns of a table already inspected), and
finds the values a first request already names (a data file path for the one
file param whose artifact type it fits — a FASTQ never fills a FASTA param —, an allowed
value such as "median" or "leave-one-out", `name=value`, a column, "predicting
species" for a label column; the
conversation uses `request_values` too, to shape what a constrained model step
may set), and reads a request for a chain of workflows ("profile my table,
then benchmark a classifier on the cleaned result"; a follow-up "then also …"). Validity beyond that is the gate's: nothing here reads a file or
calls an action.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any

from snakegate.config.read import parse_yaml
from snakegate.metaschemas import artifact_types

KEEP_DEFAULT = {"", "default", "skip", "-"}  # the TUI may not send an empty message, so words count too
TRUE_WORDS = {"yes", "y", "true"}
FALSE_WORDS = {"no", "n", "false"}
# Filler words only dilute the registry's term search ("I want to profile my table"), so they are dropped
# from the query; what remains is what an LLM would send.
FILLER = {
    "a", "an", "and", "are", "can", "could", "do", "for", "from", "have", "help", "how", "i", "i'd", "i'm", "in",
    "is", "it", "like", "me", "my", "need", "of", "on", "our", "please", "run", "some", "that", "the", "this",
    "to", "want", "we", "what", "which", "with", "would", "you",
}
NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


class Unclear(Exception):
    """An answer that does not convert to the parameter's type; the message says what was expected.
    `suggestion`, when set, is the corrected value the message offers ("did you mean …?"): a `yes` takes it."""

    def __init__(self, message: str, suggestion: Any = None) -> None:
        super().__init__(message)
        self.suggestion = suggestion


_NONE = object()


# ---- small text helpers --------------------------------------------------------------------------
def unquote(text: str) -> str:
    """Strip one pair of wrapping backticks or quotes: researchers copy `names` from the messages."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "`'\"":
        return text[1:-1].strip()
    return text


def keywords(text: str, folders: bool = True) -> str:
    """The words of a request worth searching the registry with: no filler; without `folders`, of a path only
    the file's name (the folders say where the data is kept, not what to do with it: "the variants in
    data/variant-calling/reference.fa" is no variant calling)."""
    words = [w.rsplit("/", 1)[-1] if not folders and "/" in w.strip("/") else w
             for w in re.split(r"\s+", text.strip()) if w.lower().strip(".,;:!?") not in FILLER]
    return " ".join(words) or text.strip()


def param_of(path: str) -> str | None:
    """'params.columns[1]' -> 'columns': gate error paths point inside a top-level parameter."""
    m = re.match(r"^params\.([^.\[]+)", path or "")
    return m.group(1) if m else None


def fmt(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def article(type_name: str) -> str:
    return f"an {type_name}" if type_name[:1] in "aeiou" else f"a {type_name}"


def types_of(p: dict) -> list[str]:
    t = p.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []  # enum-only params carry no type


def item_types(p: dict) -> list[str]:
    items = p.get("items")
    return types_of(items) if isinstance(items, dict) else []


def is_bounds(p: dict) -> bool:
    """An object param whose values are {min, max} bounds (e.g. constraints keyed by column)."""
    values = p.get("values")
    return ("object" in types_of(p) and isinstance(values, dict)
            and set((values.get("properties") or {})) >= {"min", "max"})


def example(types: list[str], p: dict) -> str:
    """A value of the expected type for the re-ask message, preferring the param's own default."""
    if "default" in p and p["default"] is not None and not isinstance(p["default"], (dict, list)):
        return fmt(p["default"])
    samples = {"integer": str(int(p.get("minimum", 1))), "number": str(p.get("minimum", 0.5)), "boolean": "yes",
               "string": "text", "array": "a, b", "object": '{"name": 1}'}
    return next((samples[t] for t in types if t in samples), "text")


# ---- answers -> values ---------------------------------------------------------------------------
def typed(p: dict, text: str, choices: list) -> Any:
    """The answer converted to the param's type; numbers pick from `choices`. Raises Unclear."""
    types = types_of(p)
    if "null" in types and text.lower() == "null":
        return None
    if "array" in types:
        return _typed_list(p, text, choices)
    if is_bounds(p):
        return bounds(text, p["name"])
    if choices:
        picked = pick(text, choices)
        if picked is not _NONE:
            return picked
        if "enum" in p:
            close = difflib.get_close_matches(text, [str(c) for c in choices], n=1)
            raise Unclear(f"`{text}` is not one of the choices for `{p['name']}`"
                          + (f"; did you mean `{close[0]}`? (`yes` takes it)" if close
                             else "; pick a number from the list."),
                          suggestion=pick(close[0], choices) if close else None)
        if text.isdigit() and not {"integer", "number"} & set(types):
            raise Unclear(f"`{text}` is not on the list; pick a number from 1 to {len(choices)} or type a value.")
    return _scalar(text, types, f"`{p['name']}`", example(types, p))


def pick(text: str, choices: list) -> Any:
    """A numbered choice, or a choice typed out (any case); _NONE when it is neither."""
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    for c in choices:
        if str(c) == text:
            return c
    lowered = [c for c in choices if str(c).lower() == text.lower()]
    return lowered[0] if len(lowered) == 1 else _NONE


def _typed_list(p: dict, text: str, choices: list) -> list:
    name = p["name"]
    if text.startswith("["):
        try:
            raw = json.loads(text)
        except ValueError:
            raw = None
        if not isinstance(raw, list):
            raise Unclear(f"`{text}` is not a list. `{name}` expects values separated by commas, e.g. `a, b`.")
        items = [x if isinstance(x, str) else json.dumps(x) for x in raw]
    else:
        items = [unquote(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise Unclear(f"`{name}` expects values separated by commas, e.g. `a, b`.")
    types = item_types(p)
    out = []
    for item in items:
        picked = pick(item, choices) if choices else _NONE
        if picked is _NONE and choices and item.isdigit() and not {"integer", "number"} & set(types):
            raise Unclear(f"`{item}` is not on the list; use numbers from 1 to {len(choices)} or names.")
        out.append(picked if picked is not _NONE else
                   _scalar(item, types, f"each item of `{name}`", example(types, {})))
    return out


def _scalar(text: str, types: list[str], what: str, sample: str) -> Any:
    """Try each declared type in order; strings accept anything, so they come last."""
    for t in [t for t in types if t not in ("string", "null", "array")] + (["string"] if "string" in types else []):
        value = _as(t, text)
        if value is not _NONE:
            return value
    if not types:
        return text  # an enum-only or untyped param: the gate judges the text
    wanted = " or ".join(t for t in types if t != "null") or "null"
    raise Unclear(f"`{text}` is not {article(wanted)}: {what} expects {article(wanted)}, e.g. `{sample}`.")


def _as(type_name: str, text: str) -> Any:
    low = text.lower()
    if type_name == "boolean":
        return True if low in TRUE_WORDS else False if low in FALSE_WORDS else _NONE
    if type_name == "integer":
        try:
            return int(text)
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                return _NONE
            return int(f) if math.isfinite(f) and f.is_integer() else _NONE  # "1e3" and "5.0" are whole numbers
    if type_name == "number":
        try:
            f = float(text)
        except ValueError:
            return _NONE
        if not math.isfinite(f):
            return _NONE  # NaN and infinity pass every JSON Schema bound; a run config cannot hold them
        return int(f) if re.fullmatch(r"[+-]?\d+", text) else f
    if type_name == "object":
        return as_object(text)
    if type_name == "string":
        return text
    return _NONE


def as_value(raw: str) -> Any:
    """A JSON scalar or list when the text is one (`3`, `true`, `[a]` is not), else the text itself."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def as_object(text: str) -> Any:
    """JSON, or `name=value, name=value` with JSON scalar values (bare words become strings)."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return _NONE
        return value if isinstance(value, dict) else _NONE
    out = {}
    for part in (x.strip() for x in text.split(",") if x.strip()):
        key, sep, raw = part.partition("=")
        if not sep or not key.strip():
            return _NONE
        out[key.strip()] = as_value(raw.strip())
    return out or _NONE


# ---- bounds: "Cr between 15 and 30", "Cr.max=25", "Ni <= 5", "Fe 10-20" --------------------------
_BOUND_FORMS = [
    (re.compile(rf"^(\S+?)\s+between\s+({NUM})\s+and\s+({NUM})$", re.I), ("min", "max")),
    (re.compile(rf"^(\S+?)\s*(?:=|:)?\s*({NUM})\s*(?:-|–|\.\.|to)\s*({NUM})$", re.I), ("min", "max")),
    (re.compile(rf"^({NUM})\s*<=?\s*(\S+?)\s*<=?\s*({NUM})$"), ("min", "name", "max")),
    (re.compile(rf"^(\S+?)\.(min|max)\s*(?:=|:)\s*({NUM})$", re.I), ("which",)),
    (re.compile(rf"^(\S+?)\s*(>=|≥|>|<=|≤|<)\s*({NUM})$"), ("op",)),
    (re.compile(rf"^(\S+?)\s+(at least|min|from|at most|max|up to)\s+({NUM})$", re.I), ("op",)),
]
_LOWER = {">=", "≥", ">", "at least", "min", "from"}


def bounds(text: str, name: str) -> dict:
    """Per-column bounds from natural forms (or JSON); `none`/`{}` is no constraint. Raises Unclear."""
    text = text.strip()
    if text.lower() in ("none", "{}", "no", "nothing"):
        return {}
    if text.startswith("{"):
        value = as_object(text)
        if value is _NONE:
            raise Unclear(f"`{text}` is not valid JSON for `{name}`; e.g. `{{\"Cr\": {{\"min\": 15, \"max\": 30}}}}`.")
        return value
    out: dict[str, dict] = {}
    for item in (x.strip() for x in re.split(r"[;,]", text) if x.strip()):
        col, found = _bound(item)
        if col is None:
            raise Unclear(f"`{item}` is not a bound I can read for `{name}`. Write e.g. `Cr between 15 and 30`, "
                          "`Cr.max=25`, `Ni <= 5` or `Fe 10-20`; separate several with commas.")
        out.setdefault(col, {}).update(found)
    return out


def _bound(item: str) -> tuple[str | None, dict]:
    for pattern, shape in _BOUND_FORMS:
        m = pattern.match(item)
        if not m:
            continue
        if shape == ("min", "max"):
            return m.group(1), {"min": to_number(m.group(2)), "max": to_number(m.group(3))}
        if shape == ("min", "name", "max"):
            return m.group(2), {"min": to_number(m.group(1)), "max": to_number(m.group(3))}
        if shape == ("which",):
            return m.group(1), {m.group(2).lower(): to_number(m.group(3))}
        return m.group(1), {"min" if m.group(2).lower() in _LOWER else "max": to_number(m.group(3))}
    return None, {}


def to_number(text: str) -> int | float:
    f = float(text)
    # "seed 42." at a sentence's end is the integer 42, not 42.0
    return int(f) if re.fullmatch(r"[+-]?\d+\.?", text) else f


# ---- checks the dialogue makes before the gate ---------------------------------------------------
def check(p: dict, value: Any, columns: list[str] | None) -> None:
    """Range and column checks for an answer already converted; raises Unclear naming the fix."""
    name = p["name"]
    values = value if isinstance(value, list) else [value]
    for v in values:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            low, high = p.get("minimum"), p.get("maximum")
            if (low is not None and v < low) or (high is not None and v > high):
                span = (f"from {low} to {high}" if low is not None and high is not None
                        else f"at least {low}" if low is not None else f"at most {high}")
                raise Unclear(f"`{fmt(v)}` is out of range: `{name}` must be {span}.")
    if columns is None:
        return
    names = list(value) if is_bounds(p) and isinstance(value, dict) else values if p.get("column_of") else []
    wrong = [v for v in names if isinstance(v, str) and v not in columns]
    if not wrong:
        return
    close = {v: (difflib.get_close_matches(v, columns, n=1) or [None])[0] for v in wrong}
    lines = [f"`{v}` is not a column of the table" + (f"; did you mean `{close[v]}`?" if close[v] else ".")
             for v in wrong]  # every wrong name at once: one answer, one round of fixes
    fixed = None
    if all(close.values()):
        fixed = ({close.get(k, k): b for k, b in value.items()} if isinstance(value, dict) else
                 [close.get(v, v) for v in value] if isinstance(value, list) else close[value])
        lines.append("`yes` takes " + ("these names." if len(wrong) > 1 else "it."))
    if not all(close.values()):
        lines.append(f"Columns: {', '.join(columns[:30])}.")
    raise Unclear("\n".join(lines), suggestion=fixed)


# ---- which file fits which artifact type ----------------------------------------------------------
# A .txt may hold any text (a table, a list of names): its extension says nothing against a declared type.
NEUTRAL_TYPES = {"text"}


def claims(path: str) -> list[tuple[int, str]]:
    """(length of the extension, artifact type) for every type one of whose extensions ends `path`'s name."""
    name = path.lower().rstrip("/").rsplit("/", 1)[-1]
    return [(len(ext), t) for t, spec in artifact_types().items()
            for ext in spec.get("extensions") or () if name.endswith(ext.lower())]


def type_of_file(path: str, exclude: str = "") -> str | None:
    """The artifact type (other than `exclude` and the neutral ones) whose extensions end `path`, the longest
    match first (`.fq.gz` is fastq.gz, not an unknown `.gz`); None when no type claims it."""
    found = [c for c in claims(path) if c[1] != exclude and c[1] not in NEUTRAL_TYPES]
    return max(found)[1] if found else None


def fits(path: str, artifact: str) -> bool:
    """Whether a file may fill a param of type `artifact`, judged by its name: yes when the type declares no
    extensions, when the name ends in one of them, or when no other type claims the name (a folder, an
    unusual extension: the gate reads the content); no when it is another type's file (a FASTQ for a FASTA)."""
    extensions = [e.lower() for e in artifact_types().get(artifact, {}).get("extensions") or ()]
    name = path.lower().rstrip("/")
    if not extensions or name.endswith(tuple(extensions)):
        return True
    return type_of_file(path, exclude=artifact) is None


def misfit(path: str, artifact: str) -> str | None:
    """A sentence saying why `path` does not fit a param of type `artifact` (None when it fits)."""
    if fits(path, artifact):
        return None
    extensions = artifact_types().get(artifact, {}).get("extensions") or ()
    return (f"`{path}` is a {type_of_file(path, exclude=artifact)} file, not {article(artifact)} file; "
            f"pick a file ending in {', '.join(extensions)}.")


# ---- values a first request already names --------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"[-\s]+", "_", text.strip().lower())


def request_values(text: str, params: list[dict]) -> dict[str, Any]:
    """{param: value} for what the request names unambiguously: `name=value`, a file path for the one
    artifact param whose type it fits (`fits`: a FASTQ never fills a FASTA param), an allowed value (whole, or one unique part of four letters or
    more: "median" -> fill_median, "leave-one-out" -> leave_one_out; "fit" is not fit_area)."""
    found: dict[str, Any] = {}
    by_name = {p["name"]: p for p in params}
    for m in re.finditer(r"\b([A-Za-z_][\w.]*)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s,;]+)", text):
        if m.group(1) in by_name:
            found[m.group(1)] = as_value(unquote(m.group(2)))
    paths = [w.strip(".,;:!?()\"'`") for w in text.split() if "/" in w or re.search(r"\.\w{2,5}[.,;:!?]?$", w)]
    for path in paths:
        # only a param whose artifact type the file fits: reads (alpha.fq.gz) never become a FASTA reference
        takers = [p for p in params if p.get("artifact") and p["name"] not in found and fits(path, p["artifact"])]
        if len(takers) == 1 and "=" not in path:
            found[takers[0]["name"]] = path
    words = {_norm(w.strip(".,;:!?()\"'`")) for w in re.split(r"\s+", text) if w.strip()}
    words.discard("")
    for p in params:
        if p["name"] in found or not isinstance(p.get("enum"), list):
            continue
        values = [v for v in p["enum"] if isinstance(v, str)]
        whole = [v for v in values if _norm(v) in words]
        # one distinctive part of a value ("median" of fill_median); short parts are everyday words ("fit")
        parts = [v for v in values if any(part in words for part in _norm(v).split("_")
                                          if len(part) >= 4 and sum(part in _norm(o).split("_") for o in values) == 1)]
        hit = whole if len(whole) == 1 else parts if len(parts) == 1 else []
        if hit:
            found[p["name"]] = hit[0]
    found.update(predicted_column(text, [p for p in params if p["name"] not in found]))
    return found


_PREDICT = re.compile(r"\bpredict(?:s|ing)?\s+(?:the\s+)?(?:column\s+)?[`'\"]?([A-Za-z_][\w.\-]*[A-Za-z0-9_])", re.I)


def predicted_column(text: str, params: list[dict]) -> dict[str, str]:
    """{label param: column} for "predicting species" / "predict the column quality_class": the one scalar
    column param named for a label, target or class takes the word after "predict"."""
    m = _PREDICT.search(text)
    takers = [p for p in params if p.get("column_of") and "array" not in types_of(p)
              and re.search(r"label|target|class", p["name"], re.I)]
    if not m or len(takers) != 1 or m.group(1).lower() in FILLER:
        return {}
    return {takers[0]["name"]: m.group(1)}


def _stem_words(text: str) -> set[str]:
    """Lower-case words of four letters or more, each also without a plural s ("penguins" -> "penguin")."""
    words = {w for w in re.split(r"[^a-z0-9]+", text.lower()) if len(w) >= 4}
    return words | {w[:-1] for w in words if w.endswith("s")}


def file_from_words(text: str, files: list[str], ignore: str = "") -> str | None:
    """The one file of `files` whose name shares a word with the request ("my penguins table" ->
    data/examples/tabular-penguins.csv); None when none or several do. Words of `ignore` (the workflow's id and
    title: "classifier" in "benchmark a classifier") and filler are no cue."""
    said = _stem_words(text) - _stem_words(ignore) - FILLER
    hits = [f for f in files if said & _stem_words(f.rsplit("/", 1)[-1].rsplit(".", 1)[0])]
    return hits[0] if len(hits) == 1 else None


def column_from_request(text: str, params: list[dict], columns: list[str], taken: set[str]) -> tuple[str, str] | None:
    """(param, column) when the request names exactly one column of the table and exactly one scalar
    column param is still open."""
    open_params = [p for p in params if p.get("column_of") and "array" not in types_of(p) and p["name"] not in taken]
    named = sorted({c for c in columns if re.search(rf"(?<![\w.]){re.escape(c)}(?![\w])", text)})
    if len(open_params) == 1 and len(named) == 1:
        return open_params[0]["name"], named[0]
    return None


def fork_command(text: str) -> tuple[str, dict[str, Any]] | None:
    """`<run> key=value [key=value ...]` -> (run, changes); None when it is not that shape."""
    parts = text.split(None, 1)
    if len(parts) != 2:
        return None
    changes = {}
    for m in re.finditer(r"([A-Za-z_][\w.]*)\s*=\s*(\"[^\"]*\"|'[^']*'|\[[^\]]*\]|[^\s]+)", parts[1]):
        value, error = parse_yaml(m.group(2), f"the value of {m.group(1)}")  # as `snakegate fork --set` reads it
        changes[m.group(1)] = unquote(m.group(2)) if error is not None else value
    return (parts[0], changes) if changes else None


# ---- a chain of workflows ------------------------------------------------------------------------
_CHAIN = re.compile(r"(?:\s*[,;])?\s+\b(?:and\s+then|then|followed\s+by|after\s+that)\b[\s,:]*", re.I)
_FOLLOW = re.compile(r"^\s*(?:and\s+)?(?:then|also|after\s+that)\b[\s,:]*(?:also\b[\s,:]*)?(?P<rest>\S.*)$", re.I | re.S)
_ALSO = re.compile(r"^(?:also|and)\b[\s,:]*", re.I)


def chain_parts(text: str) -> list[str]:
    """The steps a request names one after another ("profile my table, then benchmark a classifier on the
    cleaned result" -> two parts); one part when it names no chain. A part of filler words only is dropped."""
    parts = [_ALSO.sub("", p.strip(" ,;.")).strip() for p in _CHAIN.split(" " + text.strip())]
    return [p for p in parts if any(w.lower().strip(".,;:!?") not in FILLER for w in p.split())]


def follow_up(text: str) -> str | None:
    """What a follow-up asks to add ("then also benchmark a random forest" -> "benchmark a random forest"),
    or None when the message does not start with then / also / after that."""
    m = _FOLLOW.match(text.strip())
    return m.group("rest").strip() if m else None


def step_param(name: str, steps: list[str]) -> tuple[str | None, str]:
    """`bench.model` -> ("bench", "model") when `bench` is one of `steps`; otherwise (None, name)."""
    head, dot, rest = name.partition(".")
    return (head, rest) if dot and head in steps and rest else (None, name)
