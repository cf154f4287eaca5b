"""Plain-text layout for the CLI: the terminal's width (80 when it cannot tell), paragraphs and `label  value`
lines wrapped at word boundaries, and tables whose widest free-text column gives way.

Pure text in, lines out; the only thing read is the width ($COLUMNS or the terminal's). A long word (a
path, a hash) is never broken: it runs past the margin rather than being cut in two.
"""

from __future__ import annotations

import shutil
import textwrap

MIN_WIDTH = 60


def width() -> int:
    """$COLUMNS, else the terminal's width, else 80; never below MIN_WIDTH."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def wrap(text: str, indent: int = 0, first: str | None = None, total: int | None = None) -> list[str]:
    """`text` wrapped at word boundaries to `total` columns, every line indented by `indent` spaces
    (the first line starts with `first` instead, when given)."""
    total = total or width()
    pad = " " * indent
    lines = textwrap.wrap(str(text), width=max(20, total), initial_indent=first if first is not None else pad,
                          subsequent_indent=pad, break_long_words=False, break_on_hyphens=False)
    return lines or [(first if first is not None else pad).rstrip()]


def field(label: str, value, label_width: int = 16, indent: int = 0, total: int | None = None) -> list[str]:
    """`label  value` with the value wrapped under itself; a label wider than its column pushes the value
    two spaces after it on the first line."""
    start = " " * indent + label
    start = start.ljust(indent + label_width) if len(label) < label_width else start + "  "
    return wrap(str(value), indent=indent + label_width, first=start, total=total)


def table(headers: list[str], rows: list[list[str]], flexible: int, right: set[int] = frozenset(),
          total: int | None = None, gap: int = 2) -> list[str]:
    """A header line and one line per row, columns as wide as their widest cell; when the line would pass
    `total` columns, the `flexible` column is narrowed and its long cells end in `…`."""
    total = total or width()
    widths = [max(len(str(c)) for c in [h, *[r[i] for r in rows]]) for i, h in enumerate(headers)]
    over = sum(widths) + gap * (len(widths) - 1) - total
    if over > 0:
        widths[flexible] = max(len(headers[flexible]), widths[flexible] - over)

    def line(cells) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths)):
            cell = str(cell)
            if len(cell) > w and i == flexible:
                cell = cell[:max(1, w - 1)] + "…"
            out.append(cell.rjust(w) if i in right else cell.ljust(w))
        return (" " * gap).join(out).rstrip()

    return [line(headers)] + [line(r) for r in rows]
