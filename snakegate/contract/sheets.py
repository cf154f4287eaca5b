"""Sample sheets: a table param whose rows are checked against a column schema at the gate.

A param that is an `x-artifact` table (csv-table, tsv-table) may carry
`x-sample-sheet`: a JSON Schema for ONE row, written as Snakemake workflows
write `schemas/samples.schema.yaml` (`properties` per column, `required`,
`additionalProperties`). A column whose subschema has `x-artifact: <type>`
holds file paths: each is resolved (after `..` and symlinks) inside the data
roots, passes its type's cheap check, and is hashed into the invocation like
any input artifact. Relative paths resolve against the registry root, the
folder a run works in, exactly as params paths do.

`sheet_problems()` is the gate's entry: the already-resolved sheet file in,
`GateError`s (each naming row, line, column and value) and the sheet's input
files out. It reads the sheet and stats/reads the files it names; it never
writes. Every content read goes through the gate's `read(key, source)`, which
gives what to read for an input: its staged copy under `snakegate run`, the
source otherwise (snakegate.gate.reads); paths resolve, and messages name, the
sources. The pure part, `row_errors()`, turns cell strings into typed values
the way pandas would and validates them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator

from jsonschema import Draft202012Validator

from snakegate.contract import artifacts
from snakegate.models import GateError

KEYWORD = "x-sample-sheet"
MAX_SHEET_BYTES = 8 * 1024 * 1024  # a sample sheet lists samples, not data: bigger is refused
MAX_ERRORS = 50  # per sheet; the rest are summarised in one line


@dataclass
class SheetResult:
    errors: list[GateError] = field(default_factory=list)
    # invocation input key ("params.samples[row 2].read1") -> resolved file, for every path cell that passed
    inputs: dict[str, Path] = field(default_factory=dict)
    rows: int = 0


def row_schema(param_schema: dict) -> dict | None:
    sheet = param_schema.get(KEYWORD) if isinstance(param_schema, dict) else None
    return sheet if isinstance(sheet, dict) else None


def path_columns(schema: dict) -> dict[str, str]:
    """Column -> artifact type for the columns of a row schema that hold file paths (pure)."""
    props = schema.get("properties") or {}
    return {name: sub["x-artifact"] for name, sub in props.items()
            if isinstance(sub, dict) and isinstance(sub.get("x-artifact"), str)}


def input_key(param: str, row: int, column: str) -> str:
    """The invocation's input key of one path cell: `params.<param>[row <n>].<column>` (rows count from 1)."""
    return f"params.{param}[row {row}].{column}"


def read_rows(text: str, delimiter: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(line number, {column: cell})]) of a delimited table; blank lines are skipped (pure)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header: list[str] = []
    rows: list[tuple[int, dict[str, str]]] = []
    for record in reader:
        if not header:
            if not any(c.strip() for c in record):
                continue
            header = [c.lstrip("\ufeff") if i == 0 else c for i, c in enumerate(record)]
            continue
        if not any(c.strip() for c in record):
            continue
        rows.append((reader.line_num, {h: (record[i] if i < len(record) else "") for i, h in enumerate(header)}))
    return header, rows


def _types(sub: Any) -> list[str]:
    t = sub.get("type") if isinstance(sub, dict) else None
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def coerce(cell: str, sub: Any) -> Any:
    """A cell string as the value its column schema expects: numbers and booleans parsed the way
    pandas reads them, everything else kept as text. A cell that does not parse stays a string,
    so validation names it (pure)."""
    types = _types(sub)
    text = cell.strip()
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            pass
    if "number" in types:
        try:
            value = float(text)
            return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
        except ValueError:
            pass
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return cell


def row_errors(schema: dict, header: list[str], rows: list[tuple[int, dict[str, str]]],
               param: str, sheet_name: str) -> list[GateError]:
    """Every way the sheet's header and rows fail the row schema, one error per (row, column) (pure).
    Empty cells count as absent, as in Snakemake's own validate() of a data frame."""
    where = f"params.{param}"
    props = schema.get("properties") or {}
    errors: list[GateError] = []
    for column in schema.get("required") or []:
        if column not in header:
            errors.append(GateError(path=f"{where}.{column}", code="sample_sheet",
                                    message=f"sample sheet {sheet_name} has no column `{column}` "
                                            f"(its columns: {', '.join(header) or 'none'})",
                                    hint=f"add a `{column}` column: {(props.get(column) or {}).get('description', 'required')}"))
    if schema.get("additionalProperties") is False:
        for column in header:
            if column not in props:
                errors.append(GateError(path=f"{where}.{column}", code="sample_sheet",
                                        message=f"sample sheet {sheet_name} has a column `{column}` the workflow does "
                                                f"not know (known: {', '.join(props)})",
                                        hint="remove or rename the column", choices=list(props)))
    if errors:
        return errors  # a wrong header would repeat itself on every row
    validator = Draft202012Validator({k: v for k, v in schema.items() if k != "$schema"})
    for n, (line, cells) in enumerate(rows, start=1):
        record = {k: coerce(v, props.get(k)) for k, v in cells.items() if v.strip() != ""}
        for err in validator.iter_errors(record):
            column = str(err.absolute_path[0]) if err.absolute_path else None
            if err.validator == "required":
                missing = [c for c in err.validator_value if c not in record]
                for c in missing:
                    errors.append(_cell_error(where, sheet_name, n, line, c, "", "is empty but required",
                                              f"fill in `{c}` on line {line}"))
                continue
            value = record.get(column, "") if column else ""
            errors.append(_cell_error(where, sheet_name, n, line, column, value, _says(err),
                                      _fix(err, props.get(column) if column else None)))
    return errors


def _cell_error(where: str, sheet: str, row: int, line: int, column: str | None, value: Any, problem: str,
                hint: str | None) -> GateError:
    col = f", column `{column}`" if column else ""
    shown = f" value `{value}`" if value != "" else ""
    return GateError(path=f"{where}[row {row}]" + (f".{column}" if column else ""), code="sample_sheet",
                     message=f"sample sheet {sheet}, row {row} (line {line}){col}:{shown} {problem}", hint=hint)


def _says(err) -> str:
    v, s = err.validator, err.validator_value
    if v == "type":
        return f"must be of type {s if isinstance(s, str) else ' or '.join(s)}"
    if v == "enum":
        return f"must be one of {', '.join(map(str, s))}"
    if v == "pattern":
        return f"must match the pattern {s}"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return {"minimum": "must be at least", "maximum": "must be at most", "exclusiveMinimum": "must be greater than",
                "exclusiveMaximum": "must be less than"}[v] + f" {s}"
    return err.message


def _fix(err, sub: Any) -> str | None:
    from snakegate.contract.dialect import did_you_mean

    if err.validator == "enum":
        close = did_you_mean(err.instance, err.validator_value)
        return f"did you mean `{close}`?" if close else f"use one of: {', '.join(map(str, err.validator_value))}"
    desc = (sub or {}).get("description") if isinstance(sub, dict) else None
    return f"correct the cell ({desc})" if desc else "correct the cell"


Read = Callable[[str, Path], Path]  # (input key, resolved source) -> the file its content checks read


def _as_is(_key: str, source: Path) -> Path:
    return source


def sheet_problems(param: str, sheet: Path, type_name: str, schema: dict, registry_root: Path,
                   roots: list[Path], read: Read = _as_is) -> SheetResult:
    """Check the sample sheet at `sheet` (already resolved inside the data roots, passed its table check)."""
    result = SheetResult()
    where = f"params.{param}"
    try:
        readable = read(where, sheet)
        if readable.stat().st_size > MAX_SHEET_BYTES:
            result.errors.append(GateError(path=where, code="sample_sheet",
                                           message=f"sample sheet {sheet.name} is larger than "
                                                   f"{MAX_SHEET_BYTES // (1024 * 1024)} MiB; a sample sheet lists "
                                                   "samples and their files, not data",
                                           hint="point the param at the sample sheet, not at a data table"))
            return result
        text = readable.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(GateError(path=where, code="sample_sheet",
                                       message=f"sample sheet {sheet.name} cannot be read as UTF-8 text ({exc})",
                                       hint="save it as UTF-8 text"))
        return result
    header, rows = read_rows(text, artifacts.delimiter(type_name))
    result.rows = len(rows)
    if not rows:
        result.errors.append(GateError(path=where, code="sample_sheet",
                                       message=f"sample sheet {sheet.name} has a header but no rows: nothing to run on",
                                       hint="add one row per sample under the header"))
        return result
    errors = row_errors(schema, header, rows, param, sheet.name)
    flagged = {e.path for e in errors}
    for row, line, column, cell, art in _path_cells(schema, rows):
        key = f"{where}[row {row}].{column}"
        if key in flagged:
            continue
        problem = exact_path_problem(cell)
        if problem:
            errors.append(_cell_error(where, sheet.name, row, line, column, cell.encode("unicode_escape").decode(),
                                      problem, "write the path exactly as the file is named, with nothing around it"))
            continue
        problem, resolved = _resolve(cell, art, registry_root, roots, partial(read, key))
        if problem:
            errors.append(_cell_error(where, sheet.name, row, line, column, cell, problem,
                                      "give the path of an existing file inside a data root (relative paths are "
                                      f"relative to the registry root, {registry_root})"))
        else:
            result.inputs[input_key(param, row, column)] = resolved
    if len(errors) > MAX_ERRORS:
        more = len(errors) - MAX_ERRORS
        errors = errors[:MAX_ERRORS] + [GateError(path=where, code="sample_sheet",
                                                  message=f"… and {more} more problems in sample sheet {sheet.name}",
                                                  hint="fix the ones above first")]
    result.errors = errors
    return result


def _path_cells(schema: dict, rows) -> Iterator[tuple[int, int, str, str, str]]:
    cols = path_columns(schema)
    for n, (line, cells) in enumerate(rows, start=1):
        for column, art in cols.items():
            cell = cells.get(column, "")
            if cell.strip():
                yield n, line, column, cell, art  # exactly what the workflow will read: never stripped


def exact_path_problem(cell: str) -> str | None:
    """Why a path cell cannot be gated as the exact string the workflow reads, or None. The gate and the
    workflow must name the same file: pandas keeps a trailing space that a stripped check would not see,
    so `a.txt ` would be gated as `a.txt` and read as another file."""
    if cell != cell.strip():
        return "has spaces or tabs before or after the path"
    if any(ord(c) < 32 or ord(c) == 127 for c in cell):
        return "holds a control character"
    return None


def _resolve(cell: str, type_name: str, registry_root: Path, roots: list[Path],
             read: Callable[[Path], Path]) -> tuple[str | None, Path | None]:
    """(problem, resolved path) for one path cell: inside a data root, a regular file, of its type (checked on
    `read(resolved)`)."""
    try:
        raw = Path(cell).expanduser()
        resolved = (raw if raw.is_absolute() else registry_root / raw).resolve()
        is_file = resolved.is_file()
    except (OSError, RuntimeError, ValueError) as exc:
        return f"cannot be resolved to a file ({getattr(exc, 'strerror', None) or exc})", None
    if not any(resolved == r or r in resolved.parents for r in roots):
        return (f"resolves to {resolved}, outside the allowed data roots "
                f"({', '.join(str(r) for r in roots) or 'none configured'})"), None
    if not is_file:
        return f"{resolved} does not exist or is not a regular file", None
    try:
        problem = artifacts.check(read(resolved), type_name)
    except OSError as exc:  # it could not be staged (or stat'ed) for its check
        problem = f"cannot be read ({exc.strerror or exc})"
    return (problem, None) if problem else (None, resolved)


MIN_ROWS = "x-min-rows"


def gate_tables(schema: dict, params: dict, good: dict[tuple, Path], registry_root: Path, roots: list[Path],
                errors: list[GateError], read: Read = _as_is) -> dict[str, Path]:
    """The gate's one call: for each table param that passed its file checks, its sample-sheet rows and
    `x-min-rows`, read from `read(key, source)`. Appends to `errors`; returns the sample sheets' input files
    (key -> resolved source path)."""
    from snakegate.contract.dialect import format_path, iter_nodes

    inputs: dict[str, Path] = {}
    for node in iter_nodes(schema, params):
        path = good.get(node.parts)
        type_name = node.schema.get("x-artifact")
        if path is None or not isinstance(type_name, str) or not artifacts.is_table(type_name):
            continue
        name = format_path(node.parts)
        sheet = row_schema(node.schema)
        if sheet is not None:
            result = sheet_problems(name, path, type_name, sheet, registry_root, roots, read)
            errors.extend(result.errors)
            inputs.update(result.inputs)
        want = node.schema.get(MIN_ROWS)
        if isinstance(want, int) and not isinstance(want, bool) and want > 0 and sheet is None:
            try:
                have = artifacts.count_rows(read(f"params.{name}", path), type_name, stop_at=want)
            except OSError:
                have = None  # unreadable now: the gate refuses it when it takes its digest
            if have is not None and have < want:
                errors.append(GateError(path=f"params.{name}", code="format",
                                        message=f"`params.{name}` = `{node.value}` has {have} data row(s) under its "
                                                f"header; this workflow needs at least {want}",
                                        hint="point it at a table with data rows"))
    return inputs
