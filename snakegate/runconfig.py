"""Reading and writing run configs (YAML) with ruamel.yaml; YAML mistakes become gate errors."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML, YAMLError

from snakegate.errors import UserError
from snakegate.models import GateError


def _plain(value: Any) -> Any:
    """ruamel's tagged scalars and commented maps -> plain Python values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
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
    return _plain(data), None


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
