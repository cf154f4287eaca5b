"""How a param's value wraps on the narrow draft panel: after a path separator, a space, a hyphen or a list's
comma, never mid-word.

Rich folds a word that does not fit wherever the column ends (`data/examples/tabular-pengui` / `ns.csv`);
`wrap_value` breaks a value only after a `/`, a space, a word's hyphen or a `,`, and cuts a piece only when
that piece alone is wider than the column (then nothing else can fit it). `Wrapped` is the renderable the panel's params grid
holds: it wraps at the width the grid gives it and measures itself so that the grid never gives it less than
its longest piece when there is room. Pure: text in, lines out; no widget, no file.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

# a line may end after a path separator, a space or a list's comma, or after a hyphen inside a word (`tabular-`
# / `penguins.csv`), never after the dashes of an option (`--configfile`)
_BREAK = re.compile(r"(?<=[/\\ ,;])|(?<=\w-)(?=\w)")


def pieces(line: str) -> list[str]:
    """The unbreakable pieces of one line, each ending at a break point (its `/` or space kept)."""
    return [p for p in _BREAK.split(line) if p]


def wrap_value(text: str, width: int) -> list[str]:
    """`text` as lines of at most `width` characters, broken after `/`, `-`, `,` or at spaces (a space at a
    line's end is dropped); a piece wider than `width` is cut into width-sized parts, the only way it can be shown."""
    width = max(1, width)
    out: list[str] = []
    for line in str(text).split("\n"):
        current = ""
        for piece in pieces(line):
            if len((current + piece).rstrip(" ")) <= width:
                current += piece
                continue
            if current.strip(" "):  # the line so far ends at a break point: the piece starts the next one
                out.append(current.rstrip(" "))
                current = piece.lstrip(" ")
            else:
                current += piece
            while len(current.rstrip(" ")) > width:  # one piece alone is wider than the column
                out.append(current[:width])
                current = current[width:]
        out.append(current.rstrip(" "))
    return out


class Wrapped:
    """A value cell of the params grid, wrapped by `wrap_value` at the width it is rendered in."""

    def __init__(self, text: str, style: str = ""):
        self.text, self.style = str(text), style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(wrap_value(self.text, options.max_width)), style=self.style, no_wrap=True,
                   overflow="crop")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest_piece = max((len(p.rstrip(" ")) for line in self.text.split("\n") for p in pieces(line)), default=0)
        longest_line = max((len(line) for line in self.text.split("\n")), default=0)
        return Measurement(min(longest_piece, options.max_width), min(longest_line, options.max_width))
