"""A gate refusal as terminal lines: each problem wrapped to the terminal's width (snakegate.commands.layout)
with its fix under it, and a long list of choices (a table's columns, a workflow's parameters) written out
once — the problems after the first that name the same list say "as above".

Pure text: GateError-like objects in (path, code, message, hint, choices), lines out. The gate's sentences are
not changed, only where a long list would be repeated.
"""

from __future__ import annotations

import re

from snakegate.commands.layout import wrap

LONG_LIST = 40  # a list of choices shorter than this (as text) is cheap to repeat


def refusal_lines(errors, total: int | None = None) -> list[str]:
    """`  - path [code]: message` and `      fix: hint` for each problem, wrapped to `total` columns."""
    shown: set[str] = set()
    lines: list[str] = []
    for err in errors:
        message, hint = err.message, err.hint
        listed = ", ".join(map(str, err.choices)) if err.choices else ""
        if len(listed) >= LONG_LIST:
            if listed in shown:
                message, hint = as_above(message, listed), as_above(hint, listed)
            elif listed in message:
                shown.add(listed)
                hint = as_above(hint, listed)  # "must be one of a, b, …" then "fix: use one of: a, b, …"
            elif listed in (hint or ""):
                shown.add(listed)
        lines += wrap(f"{err.path or '(file)'} [{err.code}]: {message}", indent=4, first="  - ", total=total)
        if hint:
            lines += wrap(hint, indent=11, first="      fix: ", total=total)
    return lines


def as_above(text: str | None, listed: str) -> str | None:
    """`text` with the list `listed` (already written out above) replaced by a pointer to it."""
    if not text or listed not in text:
        return text
    here = re.escape(listed)
    text = re.sub(rf"\(([^():]+): {here}\)", r"(\1 as above)", text)   # "(columns: a, b)"
    text = re.sub(rf"\bone of:? {here}", "one of those above", text)   # "must be one of a, b"
    text = re.sub(rf": {here}", " as above", text)                     # "allowed parameters: a, b"
    return text.replace(listed, "those above")
