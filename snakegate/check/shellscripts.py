"""Which scripts a rule's `shell:` command starts, read from the command as written (pure).

`python scripts/x.py {input} > {output}` runs code just as `script: "scripts/x.py"` does, so the reader
scans that file the same way (`snakegate.check.reading`). Recognised, at the start of a command (after `;`,
`&&`, `||`, `|`, `(`, `then`, `do`, `env`, `VAR=value`, `time`, ...):

- `python`, `python3`, `python3.11 [options] FILE` and `python -m pkg.mod` (a module found from the
  working folder), `Rscript [options] FILE`, `bash`/`sh [options] FILE`;
- FILE written as a path relative to the working folder (`scripts/x.py`), as `{workflow.basedir}/x.py`
  (the main Snakefile's folder), or as an input of the rule (`{input.script}`, `{input[0]}`, `{input}`)
  that names a file the workflow ships (`workflow.source_path("x.py")`, `join(workflow.basedir, "x.py")`
  or a literal path).

Anything else (an inline `-c`/`-e` program, an executable started by its own path, a tool on PATH, a path
built from other values) is not a script this module knows, and is not guessed at. `shell_code` strips a
command's comments (a URL cited there is no download). Nothing is read from disk and nothing is run.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?$")
_LANGUAGE = {"Rscript": "r", "bash": "shell", "sh": "shell"}
# Words after which a new simple command starts.
_STARTERS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time", "exec", "nice",
                       "command", "nohup"})
# Options of an interpreter that take the next word as their value (so it is not the script).
_VALUED = {"python": frozenset({"-W", "-X", "-Q"}), "r": frozenset({"--default-packages"}),
           "shell": frozenset({"-o", "+o", "-O", "+O"})}
# Options that give the program inline: no file is started.
_INLINE = {"python": frozenset({"-c"}), "r": frozenset({"-e"}), "shell": frozenset({"-c"})}
_INPUT = re.compile(r"^\{input(?:\.(\w+)|\[(?:'(\w+)'|\"(\w+)\"|(\d+))\])?\}$")
_BASEDIR = "{workflow.basedir}/"
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class StartedScript:
    """One script a shell command starts: `anchor` says what `path` is relative to: "workdir" (the working
    folder), "basedir" (the main Snakefile's folder), or "input" (then `path` is the input's name:
    "script", or "_1" for the first positional input)."""

    anchor: str
    path: str
    language: str  # python | r | shell
    written: str  # the word as the command writes it, for messages
    module: bool = False  # `python -m pkg.mod`: path is "pkg/mod" without its suffix


def shell_code(text: str) -> str:
    """A shell command without its comments: `#` at the start of a word, outside quotes, to the end of the line."""
    lines = []
    for line in text.splitlines():
        quote, cut = None, len(line)
        for i, ch in enumerate(line):
            if quote:
                quote = None if ch == quote and line[i - 1] != "\\" else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (i == 0 or line[i - 1].isspace()):
                cut = i
                break
        lines.append(line[:cut])
    return "\n".join(lines)


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: nothing is known about this line
        return []


def started_scripts(command: str) -> list[StartedScript]:
    """The scripts `command` (a rule's shell text, placeholders unformatted) starts, in order."""
    out: list[StartedScript] = []
    for line in shell_code(command.replace("\\\n", " ")).splitlines():
        words = _words(line)
        start = True
        for i, word in enumerate(words):
            if word and set(word) <= set(";&|()"):
                start = True
                continue
            if set(word) <= set("<>") or not start:
                continue
            if word in _STARTERS or word == "env" or re.match(r"^[A-Za-z_]\w*=", word):
                continue  # still at the start of the command
            start = False
            language = "python" if _PYTHON.match(word) else _LANGUAGE.get(word)
            if language:
                found = _script_of(words[i + 1:], language)
                if found is not None:
                    out.append(found)
    return out


def _script_of(args: list[str], language: str) -> StartedScript | None:
    take_value = False
    for j, word in enumerate(args):
        if word and set(word) <= set(";&|()<>"):
            return None
        if take_value:
            take_value = False
            continue
        if word in _INLINE[language]:
            return None
        if language == "python" and word == "-m":
            module = args[j + 1] if j + 1 < len(args) else ""
            if not _MODULE.match(module):
                return None
            return StartedScript("workdir", module.replace(".", "/"), language, module, module=True)
        if word in _VALUED[language]:
            take_value = True
            continue
        if word.startswith("-") or word.startswith("+"):
            continue
        return _anchored(word, language)
    return None


def _anchored(word: str, language: str) -> StartedScript | None:
    match = _INPUT.match(word)
    if match:
        name, quoted1, quoted2, index = match.groups()
        key = name or quoted1 or quoted2 or (f"_{int(index) + 1}" if index is not None else "_1")
        return StartedScript("input", key, language, word)
    if word.startswith(_BASEDIR) and "{" not in word[len(_BASEDIR):]:
        return StartedScript("basedir", word[len(_BASEDIR):], language, word)
    if "{" in word or "$" in word or word.startswith(("/", "~")) or not word:
        return None  # built from values, absolute or from $HOME: not a file the workflow ships
    return StartedScript("workdir", word, language, word)


def shipped_file(node) -> tuple[str, str] | None:
    """(anchor, path) of an input that names one file by a path the reader can follow:
    `workflow.source_path("x.py")` ("source": the folder of the file that says it), `join(workflow.basedir,
    "x.py")` / `workflow.basedir + "/x.py"` ("basedir"), or a literal "x.py" ("workdir"); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "workdir", node.value
    if not isinstance(node, (ast.Call, ast.BinOp)):
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_basedir(node.left):
        rest = node.right.value if isinstance(node.right, ast.Constant) else None
        return ("basedir", rest.lstrip("/")) if isinstance(rest, str) else None
    if isinstance(node, ast.BinOp):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    parts = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
    if (name == "source_path" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id == "workflow" and len(parts) == 1 and parts[0] is not None):
        return "source", parts[0]
    if name == "join" and len(node.args) >= 2 and _is_basedir(node.args[0]) and None not in parts[1:]:
        return "basedir", "/".join(parts[1:])
    return None


def _is_basedir(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "basedir" and isinstance(node.value, ast.Name)
            and node.value.id == "workflow")
