"""Reading and writing run configs (YAML) with ruamel.yaml; YAML mistakes become gate errors."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML, YAMLError

from snakegate.errors import UserError
from snakegate.models import GateError


# A run config is a few dozen values; YAML aliases can make a short file expand without bound
# (an alias to itself, or nested aliases: "billion laughs"). Past this many values it is refused.
MAX_VALUES = 100_000


class _Unplain(ValueError):
    """The YAML loaded, but into something no run config can be."""


def _plain(value: Any, ancestors: tuple = (), budget: list | None = None) -> Any:
    """ruamel's tagged scalars and commented maps -> plain Python values (fresh copies, no shared aliases)."""
    budget = budget if budget is not None else [MAX_VALUES]
    budget[0] -= 1
    if budget[0] < 0:
        raise _Unplain(f"expands to more than {MAX_VALUES} values (nested YAML aliases?)")
    if isinstance(value, (dict, list)):
        if any(value is a for a in ancestors):
            raise _Unplain("contains itself (a YAML alias inside its own anchor)")
        ancestors = ancestors + (value,)
    if isinstance(value, dict):
        return {str(k): _plain(v, ancestors, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, ancestors, budget) for v in value]
    return value


def parse_yaml(text: str, source: str) -> tuple[Any, GateError | None]:
    try:
        data = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, GateError(path="", code="invalid_yaml", message=f"{source} is not valid YAML{where}: {problem}",
                               hint="fix the indentation or quoting on that line")
    try:
        return _plain(data), None
    except _Unplain as exc:
        return None, GateError(path="", code="invalid_yaml", message=f"{source} is not a usable run config: it {exc}",
                               hint="write the values out instead of using YAML anchors and aliases")


def read_run_config(path: str | os.PathLike) -> tuple[Any, GateError | None]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"run config {path} does not exist; create one with `snakegate init <workflow> -o {path}`")
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give the path of a run config YAML file")
    except UnicodeDecodeError:
        return None, GateError(path="", code="invalid_yaml", message=f"{path} is not UTF-8 text", hint="save it as UTF-8")
    return parse_yaml(text, str(path))


def dump_yaml(data: Any) -> str:
    yaml = YAML()
    yaml.default_flow_style = False
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def write_atomic(path: Path, text: str) -> None:
    """Write then rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
