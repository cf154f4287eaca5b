"""What the chat says, as plain text for a terminal or a script's log (`snakegate ask`): Markdown markup
taken out (bold, italics, code spans and fences, headings, links), sentences that point at the chat app's panel
or keys left out (a script has neither; `ask` prints the command that runs the draft instead), and every line
wrapped to the terminal's width with list items hanging under their marker.

Pure text in, lines out. It never changes what a sentence says, only how it is marked up and whether it is
shown here.
"""

from __future__ import annotations

import re

from snakegate.commands.layout import wrap

# a sentence naming one of these is about the chat app's panel, which `snakegate ask` does not have
APP_ONLY = re.compile(r"ctrl\+\w|\b(?:in|on|from) the panel\b|\bbutton\b|\bset name=value\b", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
LIST_ITEM = re.compile(r"^(\s*(?:\d+[.)]|[-*•])\s+)")

_MARKUP = [
    (re.compile(r"^\s*```.*$"), ""),                                   # a code fence line
    (re.compile(r"^#{1,6}\s+"), ""),                                    # a heading's hashes
    (re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)"), r"\1 (\2)"),           # [text](url)
    (re.compile(r"\*\*(.+?)\*\*"), r"\1"),                              # **bold**
    (re.compile(r"(?<![\w*])__(.+?)__(?![\w*])"), r"\1"),                # __bold__
    (re.compile(r"(?<![\w*])\*(?![\s*])([^*\n]+?)(?<!\s)\*(?![\w*])"), r"\1"),  # *italics*
    (re.compile(r"``(.+?)``"), r"\1"),                                  # ``code``
    (re.compile(r"`([^`\n]+)`"), r"\1"),                                # `code`
]


def unmarked(line: str) -> str:
    """One line with its Markdown markup taken out (snake_case names and `a * b` are left alone)."""
    for pattern, replacement in _MARKUP:
        line = pattern.sub(replacement, line)
    return line


def for_scripts(text: str) -> str:
    """`text` without the sentences that point at the chat app (its panel, its keys, its buttons)."""
    kept = []
    for line in text.split("\n"):
        sentences = [s for s in SENTENCE_END.split(line) if not APP_ONLY.search(s)]
        if sentences or not line.strip():
            kept.append(" ".join(sentences))
    return "\n".join(kept)


def plain_lines(text: str, total: int | None = None) -> list[str]:
    """What the chat said, as plain lines that fit `total` columns (the terminal's width by default); runs of
    blank lines become one, none at the ends."""
    lines: list[str] = []
    for line in for_scripts(text).split("\n"):
        line = unmarked(line).rstrip()
        if not line.strip():
            if lines and lines[-1]:
                lines.append("")
            continue
        marker = LIST_ITEM.match(line)
        hang = len(marker.group(1)) if marker else len(line) - len(line.lstrip())
        lines += wrap(line.strip(), indent=hang, first=line[:len(line) - len(line.lstrip())], total=total)
    while lines and not lines[-1]:
        lines.pop()
    return lines
