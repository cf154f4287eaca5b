"""Writing run configs (runs/<id>/config.yaml, chat drafts, `snakegate init`, test params) so that
Snakemake's own loader reads back exactly the values that were written.

Snakemake reads YAML 1.1 with PyYAML, so the writer is PyYAML's `SafeDumper`:
it quotes every string that its YAML 1.1 resolver would read as something
else (`no`, `on`, `yes`, `1:20`, `012`, `2024-01-31`, `=`, `~`). On top of
that the dumper also quotes what a YAML 1.2 reader (ruamel, yq, an editor)
would take for a number or boolean (`0o12`, `1e3`, `y`, `n`), so a written
config means one thing to every reader. No anchors/aliases, no folded lines,
keys sorted, UTF-8 text kept as written.

`dump_config` proves each text before returning it: it reads the text back
with `snakegate.config.read` (Snakemake's semantics) and refuses (ValueError)
anything that does not come back equal, type for type. Nothing here touches
the disk except `write_atomic` (a fresh temp name per call, the file's mode set
at creation, then a rename).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from pathlib import Path
from typing import Any

import yaml

from snakegate.config.read import parse_yaml

_TEMP_TRIES = 8  # fresh random temp names tried before giving up


class _Dumper(yaml.SafeDumper):
    """SafeDumper (YAML 1.1 resolver, as Snakemake reads) + the YAML 1.2 forms that must be quoted too."""

    def ignore_aliases(self, data: Any) -> bool:  # a shared list is written out twice, never as &id001/*id001
        return True


def _represent_str(dumper: _Dumper, data: str) -> yaml.ScalarNode:
    # PyYAML writes NEL (U+0085) inside single quotes, where reading folds it into a space: escape such text
    style = '"' if any(c in data for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^[-+]?0o[0-7_]+$"), list("-+0"))
_Dumper.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$"), list("-+.0123456789"))
_Dumper.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))


def same(a: Any, b: Any, *, nan_equal: bool = False) -> bool:
    """Equal and of the same types all the way down (Python's == says True == 1 == 1.0).
    `nan_equal`: NaN matches NaN (for comparing two readers; a written config never holds NaN)."""
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    if isinstance(a, dict):  # key order carries no meaning in a config
        return {(type(k), k) for k in a} == {(type(k), k) for k in b} \
            and all(same(a[k], b[k], nan_equal=nan_equal) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y, nan_equal=nan_equal) for x, y in zip(a, b))
    if nan_equal and isinstance(a, float) and a != a and b != b:
        return True
    return a == b


def dump_config(data: Any, *, sort_keys: bool = True) -> str:
    """`data` as YAML text that Snakemake's loader reads back equal to `data`; ValueError if it cannot."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=sort_keys, default_flow_style=False, allow_unicode=True,
                     width=2**31 - 1)

    back, error = parse_yaml(text, "the written config")
    if error is not None or not same(back, data):
        raise ValueError("this value cannot be written as a run config that Snakemake reads back unchanged"
                         + (f": {error.message}" if error is not None else ""))
    return text


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write a sibling temp file then rename it over `path`, so a reader never sees half a file.

    The temp file's name is new for every call (two threads or processes writing the same file never share
    one), and it is created with `mode` (e.g. 0o600 for a file that holds secrets) from its first byte,
    never chmod-ed afterwards; without `mode` it is created as `open()` creates files (0o666 less the umask)."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TEMP_TRIES):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666 if mode is None else mode)
            break
        except FileExistsError:  # 64 random bits taken already: someone else's temp file; draw again
            continue
    else:
        raise FileExistsError(errno.EEXIST, f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
