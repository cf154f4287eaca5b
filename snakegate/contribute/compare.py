"""`snakegate test`'s comparisons of an output with its expected file (pure): byte for byte, text as a
unified diff, JSON numbers within a tolerance, CSV/TSV tables cell by cell within a tolerance, with lines
matching `ignore_lines` left out on both sides. Bytes in, (status, detail) out; nothing is read or run.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any, Literal

Status = Literal["identical", "differs", "missing", "no expected file",
                 "as declared", "not as declared", "not proven", "as expected", "not as expected"]
DIFF_LINES = 20


def compare_bytes(actual: bytes, expected: bytes, tolerance: float | None = None) -> tuple[Status, str | None]:
    """(status, detail) for one output; `tolerance` compares numbers inside JSON."""
    if actual == expected:
        return "identical", None
    if tolerance is not None:
        try:
            a, e = json.loads(actual), json.loads(expected)
        except (ValueError, UnicodeDecodeError):
            pass
        else:
            where = json_difference(a, e, tolerance)
            if where is None:
                return "identical", f"equal within tolerance {tolerance:g}"
            return "differs", f"beyond tolerance {tolerance:g} at {where}"
    try:
        a_text, e_text = actual.decode("utf-8"), expected.decode("utf-8")
    except UnicodeDecodeError:
        first = next((i for i, (x, y) in enumerate(zip(actual, expected)) if x != y), min(len(actual), len(expected)))
        return "differs", (f"binary files differ: {len(actual)} bytes vs {len(expected)} expected, "
                           f"first difference at byte {first}")
    return "differs", text_diff(a_text, e_text)


def text_diff(actual: str, expected: str, limit: int = DIFF_LINES) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm="", n=1))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines) or "the files differ only in line endings or a trailing newline"


def json_difference(actual: Any, expected: Any, tol: float, path: str = "$") -> str | None:
    """Where two JSON values differ beyond `tol` on numbers (None when they agree)."""
    if _is_number(actual) and _is_number(expected):
        if math.isnan(actual) and math.isnan(expected):
            return None
        if actual == expected or abs(actual - expected) <= tol:
            return None
        return f"{path}: {actual!r} vs expected {expected!r}"
    if type(actual) is not type(expected):
        return f"{path}: {type(actual).__name__} vs expected {type(expected).__name__}"
    if isinstance(actual, dict):
        if set(actual) != set(expected):
            return f"{path}: keys {sorted(set(actual) ^ set(expected))} differ"
        for key in sorted(actual):
            where = json_difference(actual[key], expected[key], tol, f"{path}.{key}")
            if where:
                return where
        return None
    if isinstance(actual, list):
        if len(actual) != len(expected):
            return f"{path}: {len(actual)} items vs expected {len(expected)}"
        for i, (x, y) in enumerate(zip(actual, expected)):
            where = json_difference(x, y, tol, f"{path}[{i}]")
            if where:
                return where
        return None
    return None if actual == expected else f"{path}: {actual!r} vs expected {expected!r}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare_output(actual: bytes, expected: bytes, type_name: str, tolerance: float | None = None,
                   ignore_lines: list[str] = ()) -> tuple[Status, str | None]:
    """(status, detail) for one declared output: lines matching `ignore_lines` left out on both sides, then
    JSON within `tolerance`, a CSV/TSV table cell by cell within `tolerance`, or byte for byte (pure)."""
    if ignore_lines:
        patterns = [re.compile(p) for p in ignore_lines]
        try:
            actual, expected = (b"\n".join(l for l in data.split(b"\n")
                                           if not any(p.search(l.decode("utf-8", "replace")) for p in patterns))
                                for data in (actual, expected))
        except re.error as exc:  # the manifest schema checks the regexes; never crash on one
            return "differs", f"ignore_lines has a bad regular expression ({exc})"
    if tolerance is not None and _delimiter(type_name) and actual != expected:
        where = table_difference(actual, expected, tolerance, _delimiter(type_name))
        if where is None:
            return "identical", f"equal within tolerance {tolerance:g}"
        return "differs", f"beyond tolerance {tolerance:g} at {where}"
    status, detail = compare_bytes(actual, expected, tolerance)
    if status == "identical" and ignore_lines and detail is None:
        detail = "identical apart from the ignored lines"
    return status, detail


def _delimiter(type_name: str) -> str | None:
    from snakegate.contract import artifacts

    return artifacts.delimiter(type_name) if artifacts.is_table(type_name) else None


def table_difference(actual: bytes, expected: bytes, tol: float, delimiter: str) -> str | None:
    """Where two delimited tables differ (numbers within `tol`, other cells exactly), or None (pure)."""
    import csv
    import io

    rows_a = list(csv.reader(io.StringIO(actual.decode("utf-8", "replace")), delimiter=delimiter))
    rows_e = list(csv.reader(io.StringIO(expected.decode("utf-8", "replace")), delimiter=delimiter))
    if len(rows_a) != len(rows_e):
        return f"{len(rows_a)} rows vs expected {len(rows_e)}"
    for i, (ra, re_) in enumerate(zip(rows_a, rows_e), start=1):
        if len(ra) != len(re_):
            return f"line {i}: {len(ra)} fields vs expected {len(re_)}"
        for j, (a, e) in enumerate(zip(ra, re_)):
            if a == e:
                continue
            try:
                fa, fe = float(a), float(e)
            except ValueError:
                return f"line {i}, field {j + 1}: {a!r} vs expected {e!r}"
            if not (math.isclose(fa, fe, rel_tol=0, abs_tol=tol) or (math.isnan(fa) and math.isnan(fe))):
                return f"line {i}, field {j + 1}: {a} vs expected {e}"
    return None
