"""A follow-up in the researcher's words, read as parameter changes through the workflow's contract. Pure.

"try leave-one-out instead of 5-fold", "use fill_mean instead", "same with Cr below 10", "100 candidates",
"the other model", "background ROI [20, 28, 8, 24]": `read_changes(text, params, current, columns)` maps
the words to params by what the contract declares, and nothing else:
- `name=value` for a param the workflow has;
- an allowed value (enum) named whole ("leave-one-out", "random forest"), by one distinctive part of four
  letters or more ("median" -> fill_median), by its initials ("LOO"), or, failing those, by a distinctive
  word of the description the param gives that value ("200 trees" -> random_forest); a value named after
  "instead of", "rather than" or "not" is the one being replaced, never the new one;
- "the other <param>" for a param with two allowed values;
- a bound on a column of a per-column bounds param ("Cr below 10", "Ni between 10 and 40", "Fe 10-20"),
  merged into the bounds the run had;
- a number next to a word naming a numeric param or its unit ("100 candidates", "seed 3", "0.5 ps");
- a list next to an array param's name ("background ROI [20, 28, 8, 24]");
- "without"/"no" before a boolean param's name (false), the name alone (true).
The result says how each word was read (`read_as`), so the reply can say it back. When the words fit
several params or values, `options` lists each reading and nothing is chosen; when they fit none, nothing
is changed. Never guesses silently: the gate, and then the person, decide.
Nothing here reads a file or calls an action.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from snakegate.agent.guided.parse import NUM, as_value, is_bounds, types_of, unquote
from snakegate.config.read import parse_yaml

# Words that make a message a follow-up about a run even when no param could be read from it.
CUES = re.compile(r"\b(instead|try|use|same|again|re-?run|switch|rather|change|swap|other|another|different|"
                  r"without|fewer|more|less)\b", re.I)
_OLD = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of|not|replacing)\s+((?:[^\s,;.!?]+\s*){1,3})",
                  re.I)
_OTHER = re.compile(r"\b(?:the\s+)?(?:other|another|different)\b", re.I)
_NEGATION = re.compile(r"\b(?:without|no|not|don'?t|skip|disable)\s+(?:\w+\s+){0,1}$", re.I)
_UPPER = r"below|under|less\s+than|lower\s+than|at\s+most|no\s+more\s+than|up\s+to|max(?:imum)?|<=|<|≤"
_LOWER = r"above|over|more\s+than|greater\s+than|higher\s+than|at\s+least|no\s+less\s+than|min(?:imum)?|>=|>|≥"
_STOP = {"the", "and", "for", "with", "from", "each", "that", "this", "than", "more", "less", "best", "only",
         "default", "slower", "faster", "rows", "data", "value", "values"}


@dataclass(frozen=True)
class Reading:
    """What a follow-up changes: `changes` (one reading), or `options` (several, each a full changes dict,
    with `question` saying what is unclear); `read_as` says how each change was read."""

    changes: dict[str, Any] = field(default_factory=dict)
    options: list[dict[str, Any]] = field(default_factory=list)
    question: str = ""
    read_as: dict[str, str] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return bool(self.changes or self.options)


def is_follow_up(text: str) -> bool:
    """Whether the words ask to change something about a run ("try …", "… instead", "same with …")."""
    return bool(CUES.search(text))


# ---- words ---------------------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"[-\s]+", "_", str(text).strip().lower())


def _grams(text: str) -> set[str]:
    """Every run of one to four words, normalised (`leave one out` and `leave-one-out` both leave_one_out)."""
    words = [_norm(w.strip(".,;:!?()\"'`")) for w in re.split(r"\s+", text) if w.strip(".,;:!?()\"'`")]
    return {"_".join(words[i:i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}


def _split_old(text: str) -> tuple[str, str]:
    """(the words naming the new value, the words naming the value being replaced)."""
    old = " ".join(m.group(1) for m in _OLD.finditer(text))
    return _OLD.sub(" ", text), old


def _name_words(name: str) -> list[str]:
    return [w for w in _norm(name).split("_") if w]


def _mentions(grams: set[str], words: list[str], name: str) -> bool:
    """Whether the text names the param: its whole name, or every part of it (a part as a word's start:
    "bootstrap resamples" names n_bootstrap by `bootstrap`; short parts such as `n` are left out)."""
    if _norm(name) in grams:
        return True
    parts = [p for p in _name_words(name) if len(p) >= 3]
    return bool(parts) and all(any(w.startswith(p) or p.startswith(w) and len(w) >= 4 for w in words)
                               for p in parts)


def _glosses(description: str, values: list[str]) -> dict[str, set[str]]:
    """The words a param's description says about each allowed value: `'random_forest' (200 trees; robust …)`."""
    out: dict[str, set[str]] = {}
    for v in values:
        m = re.search(rf"['\"`]{re.escape(v)}['\"`]\s*\(([^)]*)\)", description or "")
        if m:
            out[v] = {w for w in re.findall(r"[a-z][a-z-]{4,}", m.group(1).lower()) if w not in _STOP}
    common = set.intersection(*out.values()) if len(out) > 1 else set()
    return {v: words - common - set().union(*(o for k, o in out.items() if k != v)) for v, words in out.items()}


# ---- one kind of change at a time ----------------------------------------------------------------
def _explicit(text: str, by_name: dict) -> dict[str, Any]:
    found = {}
    for m in re.finditer(r"\b([A-Za-z_][\w.]*)\s*=\s*(\"[^\"]*\"|'[^']*'|\[[^\]]*\]|\{[^}]*\}|[^\s,;]+)", text):
        if m.group(1).split(".")[0] in by_name:
            value, error = parse_yaml(m.group(2), f"the value of {m.group(1)}")
            found[m.group(1)] = unquote(m.group(2)) if error is not None else value
    return found


def _enum_hits(p: dict, grams: set[str], words: list[str]) -> list[tuple[str, str]]:
    """[(value, how)] the new words name for an enum param."""
    values = [v for v in p.get("enum") or [] if isinstance(v, str)]
    whole = [(v, f"“{v}”") for v in values if _norm(v) in grams]
    if whole:
        return whole
    hits, shared = [], []
    for v in values:
        parts = _norm(v).split("_")
        distinct = [x for x in parts if len(x) >= 4 and x.isalpha()
                    and sum(x in _norm(o).split("_") for o in values) == 1]
        hit = next((x for x in distinct if x in grams), None)
        if hit:
            hits.append((v, f"“{hit}”"))
        elif len(parts) >= 3 and "".join(x[0] for x in parts) in {w.rstrip("cv") for w in words} | set(words):
            hits.append((v, f"“{''.join(x[0] for x in parts).upper()}”"))
        else:  # a part two values share ("fill" of fill_mean and fill_median): each is a reading to ask about
            common = next((x for x in parts if len(x) >= 4 and x.isalpha() and x in grams), None)
            if common:
                shared.append((v, f"“{common}”"))
    return hits or shared


def _gloss_hits(p: dict, words: list[str]) -> list[tuple[str, str]]:
    values = [v for v in p.get("enum") or [] if isinstance(v, str)]
    out = []
    for v, gloss in _glosses(p.get("description") or "", values).items():
        hit = next((w for w in words if w in gloss), None)
        if hit:
            out.append((v, f"“{hit}” (the description of `{v}`)"))
    return out


def _bounds(text: str, p: dict, current: Any, columns: list[str]) -> tuple[dict, list[str], list[tuple]]:
    """(the merged bounds, how each was read, the spans used) for a per-column bounds param."""
    names = {c.lower(): c for c in columns}
    col = r"(?P<col>[A-Za-z_][\w.]*)"
    forms = [
        (re.compile(rf"{col}\s+(?:between|from)\s+(?P<a>{NUM})\s*(?:and|to|-|–)\s*(?P<b>{NUM})", re.I), "both"),
        (re.compile(rf"{col}\s*(?:is\s+|stays?\s+|kept\s+|of\s+)?(?P<op>{_UPPER})\s*(?P<n>{NUM})", re.I), "max"),
        (re.compile(rf"{col}\s*(?:is\s+|stays?\s+|kept\s+|of\s+)?(?P<op>{_LOWER})\s*(?P<n>{NUM})", re.I), "min"),
        (re.compile(rf"{col}\s+(?P<a>{NUM})\s*(?:-|–|to)\s*(?P<b>{NUM})", re.I), "both"),
    ]
    merged = json.loads(json.dumps(current)) if isinstance(current, dict) else {}
    said, spans = [], []
    for pattern, kind in forms:
        for m in pattern.finditer(text):
            name = names.get(m.group("col").lower())
            if name is None or any(s <= m.start() < e for s, e in spans):
                continue
            bound = merged.setdefault(name, {})
            if kind == "both":
                bound.update(min=as_value(m.group("a")), max=as_value(m.group("b")))
                said.append(f"“{m.group(0).strip()}” as {name} from {m.group('a')} to {m.group('b')}")
            else:
                bound[kind] = as_value(m.group("n"))
                said.append(f"“{m.group(0).strip()}” as {name} {kind} {m.group('n')}")
                other = "min" if kind == "max" else "max"
                old = bound.get(other)
                if isinstance(old, (int, float)) and (old > bound[kind] if kind == "max" else old < bound[kind]):
                    del bound[other]  # the run's other bound leaves nothing between them: it goes, said so
                    said.append(f"the run's {name} {other} {old} dropped (nothing lies between it and the new "
                                f"{kind})")
            spans.append((m.start(), m.end()))
    return merged, said, spans


def _numbers(text: str, p: dict, spans: list[tuple]) -> list[tuple[Any, str]]:
    """[(number, how)] next to a word naming the numeric param `p` (its name, a part, or its unit)."""
    name_parts = [x for x in _name_words(p["name"]) if len(x) >= 3]
    unit = _name_words(p["name"])[-1] if len(_name_words(p["name"])) > 1 else None
    number = rf"(?<![\w.\-\[,])(?P<n>{NUM})(?![\w.\-\]])"
    found = []
    patterns = [re.compile(rf"{number}\s+(?P<w>[A-Za-z][\w-]*)"),
                re.compile(rf"(?P<w>[A-Za-z][\w-]*)\s*(?:of|to|=|:|at|is)?\s*{number}")]
    for pattern in patterns:
        for m in pattern.finditer(text):
            if any(s <= m.start("n") < e for s, e in spans):
                continue
            word = _norm(m.group("w"))
            singular = word[:-1] if word.endswith("s") else word
            named = word == _norm(p["name"]) or any(singular == x or word == x or singular == x.rstrip("s")
                                                    for x in name_parts)
            if named or (unit and word == unit and pattern is patterns[0]):
                found.append((as_value(m.group("n")), f"“{m.group(0).strip()}”"))
    return found


def _lists(text: str, p: dict, grams: set[str], words: list[str]) -> list[tuple[Any, str]]:
    if not _mentions(grams, words, p["name"]):
        return []
    out = []
    for m in re.finditer(r"\[[^\[\]]*\]", text):
        try:
            value = json.loads(m.group(0))
        except ValueError:
            continue
        out.append((value, f"“{m.group(0)}”"))
    return out


# ---- the reading ---------------------------------------------------------------------------------
def read_changes(text: str, params: list[dict], current: dict | None = None,
                 columns: list[str] | None = None) -> Reading:
    """The changes `text` asks for (see the module's docstring). `params`: the workflow's parameter table
    (describe_workflow's); `current`: the values the run had; `columns`: the table's column names known."""
    current = current or {}
    by_name = {p["name"]: p for p in params if not p.get("sensitive")}
    explicit = _explicit(text, by_name)
    new_text, old_text = _split_old(text)
    grams = _grams(new_text)
    words = [_norm(w) for w in re.findall(r"[A-Za-z][\w-]*", new_text)]
    candidates: dict[str, list[tuple[Any, str]]] = {}

    def add(name: str, value: Any, how: str) -> None:
        if name not in explicit and all(v != value for v, _ in candidates.get(name, [])):
            candidates.setdefault(name, []).append((value, how))

    spans: list[tuple] = []
    for p in by_name.values():
        if is_bounds(p):
            merged, said, used = _bounds(new_text, p, current.get(p["name"], p.get("default")), columns or [])
            if said:
                add(p["name"], merged, "; ".join(said))
                spans += used
    for p in by_name.values():
        types = types_of(p)
        if isinstance(p.get("enum"), list):
            hits = _enum_hits(p, grams, words)
            if not hits and _OTHER.search(new_text) and _mentions(grams, words, p["name"]):
                others = [v for v in p["enum"] if v != current.get(p["name"], p.get("default"))]
                hits = [(v, f"“the other {p['name']}”") for v in others]
            for value, how in hits:
                add(p["name"], value, how)
        elif {"integer", "number"} & set(types):
            for value, how in _numbers(new_text, p, spans):
                add(p["name"], value, how)
        elif "array" in types and not p.get("column_of"):
            for value, how in _lists(new_text, p, grams, words):
                add(p["name"], value, how)
        elif "boolean" in types and _mentions(grams, words, p["name"]):
            first = min((m.start() for part in _name_words(p["name"]) if len(part) >= 3
                         for m in re.finditer(rf"\b{re.escape(part)}", new_text, re.I)), default=0)
            add(p["name"], not _NEGATION.search(new_text[:first]), f"“{new_text[:first + 20].strip()}…”")
    if not candidates and not explicit:  # the descriptions of allowed values, only when nothing else fits
        for p in by_name.values():
            for value, how in _gloss_hits(p, words) if isinstance(p.get("enum"), list) else []:
                add(p["name"], value, how)
    old = _grams(old_text)
    for name, found in candidates.items():  # a value named as the one replaced is not the new one
        kept = [(v, how) for v, how in found if _norm(str(v)) not in old]
        if len(kept) > 1:  # both the current and a new value named: the new one
            kept = [(v, how) for v, how in kept if v != current.get(name)] or kept
        candidates[name] = kept
    candidates = {n: f for n, f in candidates.items() if f}
    # one word fitting several params: a value of two enum params, a number next to two names
    changes = dict(explicit)
    read_as = {n: f"`{n}={json.dumps(v) if not isinstance(v, str) else v}`" for n, v in explicit.items()}
    unclear = {n: f for n, f in candidates.items() if len(f) > 1}
    clear = {n: f[0] for n, f in candidates.items() if len(f) == 1}
    hows: dict[str, list[str]] = {}
    for n, (_, how) in clear.items():
        hows.setdefault(how, []).append(n)
    for how, names in hows.items():
        if len(names) > 1 and not how.startswith("“the other"):
            unclear.update({n: [clear.pop(n)] for n in names})
    for n, (value, how) in clear.items():
        changes[n] = value
        read_as[n] = how
    if not unclear:
        return Reading(changes=changes, read_as=read_as)
    options = []
    for name, found in unclear.items():
        options += [{**changes, name: value} for value, _ in found]
    names = ", ".join(f"`{n}`" for n in unclear)
    return Reading(options=options, read_as=read_as,
                   question=f"Your words fit more than one change ({names}); which one do you mean?")
