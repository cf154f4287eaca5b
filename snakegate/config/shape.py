"""Hostile shapes in a loaded run config: the checks that must come before anything walks it.

`shape_errors(value)` proves that a value (a run config as loaded, or the
params a model sent) is small, shallow, acyclic plain data: mappings with
text keys, lists, text, booleans, null, integers that fit in 64 bits and
finite floats. Everything else is a `GateError` with a code and a fix:

- `yaml_bomb`: more than `MAX_VALUES` values once YAML aliases are expanded, or
  a value that contains itself. The size is computed once per distinct object
  (Snakemake's loader keeps aliases shared), so a 1 KB "billion laughs" is
  refused in microseconds instead of being walked for minutes.
- `too_deep`: lists/mappings nested more than `MAX_DEPTH` levels.
- `too_large`: more than `MAX_VALUES` values all written out (no alias shared
  anywhere), or an integer outside the signed 64-bit range (Python refuses to
  print integers beyond 4,300 digits, and no workflow tool reads them).
- `range`: NaN or infinity. `type`: a mapping key that is not text (YAML 1.1
  reads `on:` as `true:` and `1:` as `1:`), a date, bytes, a set, a tuple, a
  Python object, or text that is not valid Unicode.

Pure: no files, no network; it never converts a value to text it has not
bounded first, and its recursion is bounded by `MAX_DEPTH`.
"""

from __future__ import annotations

import math
from typing import Any

from snakegate.contract.dialect import format_path
from snakegate.models import GateError

MAX_VALUES = 100_000  # values in a run config after aliases are expanded (a run config holds a few dozen)
MAX_DEPTH = 32        # nested lists/mappings, the top-level mapping counted as 1
INT_BITS = 63         # integers must fit in a signed 64-bit integer


class _Stop(Exception):
    def __init__(self, error: GateError):
        self.error = error


def _digits(n: int) -> int:
    """Decimal digits of |n| without str(n) (which Python refuses beyond 4,300 digits)."""
    return max(1, int(abs(n).bit_length() * math.log10(2)) + 1)


def _scalar_error(value: Any, where: str) -> GateError | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        if value.bit_length() <= INT_BITS:
            return None
        return GateError(path=where, code="too_large",
                         message=f"`{where}` is an integer of about {_digits(value)} digits; integers in a run config "
                                 "must fit in 64 bits (between -9223372036854775808 and 9223372036854775807)",
                         hint="write a smaller number, or quote it if it is an identifier rather than a number")
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return GateError(path=where, code="range", message=f"`{where}` must be a finite number (got {value})",
                         hint="write a finite number")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return GateError(path=where, code="type",
                             message=f"`{where}` holds text that is not valid Unicode (a lone surrogate such as \\ud800)",
                             hint="remove the escaped surrogate; write the character itself")
        return None
    kind = type(value).__name__
    return GateError(path=where, code="type",
                     message=f"`{where}` holds a {kind}, which a run config cannot carry "
                             "(only text, numbers, true/false, null, lists and mappings)",
                     hint="quote the value to make it a string, or write a number, true/false or a list")


def _key_error(key: Any, parts: tuple) -> GateError | None:
    if isinstance(key, str):
        return _scalar_error(key, format_path(parts + (key,)))
    where = format_path(parts) or "the run config"
    if isinstance(key, bool):
        shown = "true" if key else "false"
        why = f"a key that YAML 1.1 (Snakemake's loader) reads as the boolean {shown} (yes/no/on/off/true/false)"
    elif isinstance(key, (int, float)) and _scalar_error(key, where) is None:
        why = f"the key {key!r}, which Snakemake's loader reads as a number, not text"
    elif key is None:
        why = "an empty or null key"
    else:
        why = f"a key that is a {type(key).__name__}, not text"
    return GateError(path=where, code="type", message=f"`{where}` has {why}; run-config keys must be text",
                     hint="put the key in quotes, e.g. \"on\": or \"1\":")


def _walk(value: Any, parts: tuple, depth: int, memo: dict, open_ids: set, budget: list, expanded: list) -> int:
    """Height of `value` (1 for a scalar); fills memo[id] = height and charges the expanded size to budget;
    expanded[0] says whether a shared value (an alias) was counted again."""
    if not isinstance(value, (dict, list)):
        budget[0] -= 1
        error = _scalar_error(value, format_path(parts))
        if error:
            raise _Stop(error)
        return 1
    where = format_path(parts) or "the run config"
    key = id(value)
    if key in open_ids:
        raise _Stop(GateError(path=format_path(parts), code="yaml_bomb",
                              message=f"`{where}` contains itself (a YAML alias inside its own anchor)",
                              hint="write the values out instead of using YAML anchors and aliases"))
    if key in memo:  # an alias: already proved, only its expanded size and depth count again
        size, height = memo[key]
        budget[0] -= size
        expanded[0] = True
    else:
        if depth > MAX_DEPTH:
            raise _Stop(_too_deep(parts))
        open_ids.add(key)
        before = budget[0]
        budget[0] -= 1
        height = 0
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            if isinstance(value, dict):
                error = _key_error(k, parts)
                if error:
                    raise _Stop(error)
                budget[0] -= 1
            height = max(height, _walk(v, parts + (k,), depth + 1, memo, open_ids, budget, expanded))
            if budget[0] < 0:
                break
        open_ids.discard(key)
        height += 1
        memo[key] = (before - budget[0], height)
    if depth + height - 1 > MAX_DEPTH:
        raise _Stop(_too_deep(parts))
    if budget[0] < 0 and not expanded[0]:
        raise _Stop(GateError(path="", code="too_large",
                              message=f"the run config holds more than {MAX_VALUES:,} values, all written out (no "
                                      "YAML aliases); a run config holds a few dozen",
                              hint="put bulk data in a file inside a data root and give its path as a parameter"))
    if budget[0] < 0:
        raise _Stop(GateError(path="", code="yaml_bomb",
                              message=f"the run config holds more than {MAX_VALUES:,} values, counting every repeat "
                                      "of a YAML alias (aliases repeating aliases are a \"billion laughs\" bomb); "
                                      "a run config holds a few dozen",
                              hint="write the values out instead of nesting YAML anchors and aliases; "
                                   "put bulk data in a file inside a data root"))
    return height


def _too_deep(parts: tuple) -> GateError:
    where = format_path(parts)
    shown = where if len(where) <= 40 else where[:40] + "…"
    return GateError(path=where, code="too_deep",
                     message=f"the run config nests lists/mappings more than {MAX_DEPTH} levels deep (at `{shown}`)",
                     hint=f"flatten the value; a run config nests at most {MAX_DEPTH} levels")


def shape_errors(value: Any, parts: tuple = ()) -> list[GateError]:
    """[] when `value` is bounded plain data, else the first hostile shape found (walking further is the hazard)."""
    try:
        _walk(value, parts, 1, {}, set(), [MAX_VALUES], [False])
    except _Stop as stop:
        return [stop.error]
    return []
