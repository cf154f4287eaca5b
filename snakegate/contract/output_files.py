"""Bounded reads of a run's output files for its checks (snakegate.contract.evaluate): a JSON document, or a
table's header and one column's cells, streamed.

An output a workflow wrote may be anything (a hostile contribution, a job killed half-way, a file swapped
after its job): `reader(files)` gives the `read_output(name)` a verdict takes, which opens only regular
files (never following a symbolic link, never waiting on a FIFO), reads a JSON output of at most
MAX_JSON_BYTES whole and a table row by row up to MAX_TABLE_BYTES and MAX_TABLE_ROWS, and, given the
sha256 the output's job recorded (snakegate.run.guard), refuses bytes that are not those. Anything else is
`Unreadable` with a sentence saying why, never naming what the file holds. Reads only; writes nothing.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import os
import stat
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

MAX_JSON_BYTES = 16 << 20
MAX_TABLE_BYTES = 64 << 20
MAX_TABLE_ROWS = 1_000_000
_CHUNK = 1 << 16
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Unreadable(Exception):
    """An output a check cannot measure; the message says why."""


@dataclass(frozen=True)
class JsonOutput:
    document: Any


@dataclass(frozen=True)
class TableOutput:
    header: list[str]
    cells: Callable[[str], Iterator[str]]  # one column's cells, row by row; may raise Unreadable mid-way


@dataclass(frozen=True)
class OutputFile:
    """Where an output is and what it is; `sha256`: the bytes its job recorded (None: not checked);
    `missing`: why there is nothing to read (the run did not make it, ...)."""

    path: Path
    type: str
    sha256: str | None = None
    missing: str | None = None


def reader(files: dict[str, OutputFile]) -> Callable[[str], JsonOutput | TableOutput]:
    """`read_output(name)` over these files: JsonOutput, TableOutput, or Unreadable saying why."""
    from snakegate.contract import artifacts

    def read_output(name: str) -> JsonOutput | TableOutput:
        entry = files.get(name)
        if entry is None:
            raise Unreadable(f"output `{name}` is not among the run's outputs")
        if entry.missing:
            raise Unreadable(f"output `{name}` {entry.missing}")
        if entry.type == "json":
            return JsonOutput(_json(entry, name))
        if artifacts.is_table(entry.type):
            return _table(entry, name, artifacts.delimiter(entry.type))
        raise Unreadable(f"output `{name}` is a {entry.type} file, not json or a table")

    return read_output


def _open(path: Path, name: str) -> int:
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise Unreadable(f"output `{name}` was not written") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(f"output `{name}` is a symbolic link (not followed)") from None
        raise Unreadable(f"output `{name}` cannot be read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise Unreadable(f"output `{name}` is not a regular file (not read)")
    return fd


class _Bounded(io.RawIOBase):
    """A file descriptor read at most `limit` bytes far, hashing what it reads."""

    def __init__(self, fd: int, limit: int, name: str):
        self.fd, self.limit, self.name, self.read_bytes = fd, limit, name, 0
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = os.read(self.fd, min(len(buffer), _CHUNK))
        except OSError as exc:
            raise Unreadable(f"output `{self.name}` cannot be read ({exc.strerror or exc})") from None
        self.read_bytes += len(data)
        if self.read_bytes > self.limit:
            raise Unreadable(f"output `{self.name}` is larger than {self.limit >> 20} MiB, more than a check reads")
        self.digest.update(data)
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


def _same_bytes(stream: _Bounded, entry: OutputFile, name: str) -> None:
    if entry.sha256 is not None and stream.digest.hexdigest() != entry.sha256:
        raise Unreadable(f"output `{name}` is not the file its job recorded (its sha256 differs): it changed "
                         "after the job")


def _json(entry: OutputFile, name: str) -> Any:
    with _Bounded(_open(entry.path, name), MAX_JSON_BYTES, name) as stream:
        data = b"".join(iter(lambda: stream.read(_CHUNK), b""))
        _same_bytes(stream, entry, name)
    try:
        return json.loads(data)
    except RecursionError:
        raise Unreadable(f"output `{name}` is nested too deeply to read") from None
    except ValueError:
        raise Unreadable(f"output `{name}` is not valid JSON") from None


def _table(entry: OutputFile, name: str, delimiter: str) -> TableOutput:
    with closing(_rows(entry, name, delimiter)) as rows:
        header = next(rows, None)
    if header is None:
        raise Unreadable(f"output `{name}` has no header row")

    def cells(column: str) -> Iterator[str]:
        with closing(_rows(entry, name, delimiter)) as rows:
            if next(rows, None) != header:
                raise Unreadable(f"output `{name}` changed while it was read")
            at = header.index(column)
            for n, row in enumerate(rows, start=1):
                if n > MAX_TABLE_ROWS:
                    raise Unreadable(f"output `{name}` has more than {MAX_TABLE_ROWS:,} rows, more than a check "
                                     "reads")
                if len(row) != len(header):
                    raise Unreadable(f"row {n} of output `{name}` has {len(row)} fields, its header {len(header)}")
                yield row[at]

    return TableOutput(header=header, cells=cells)


def _rows(entry: OutputFile, name: str, delimiter: str) -> Iterator[list[str]]:
    """The non-blank rows of a delimited file, the header first (a byte-order mark dropped); the file's
    bytes checked against its record once all are read."""
    with _Bounded(_open(entry.path, name), MAX_TABLE_BYTES, name) as raw:
        text = io.TextIOWrapper(io.BufferedReader(raw, _CHUNK), encoding="utf-8", errors="replace", newline="")
        first = True
        try:
            for row in csv.reader(text, delimiter=delimiter):
                if not any(cell.strip() for cell in row):
                    continue
                if first and row[0].startswith("\ufeff"):
                    row[0] = row[0][1:]
                first = False
                yield row
        except csv.Error as exc:
            raise Unreadable(f"output `{name}` is not a readable table ({exc})") from None
        _same_bytes(raw, entry, name)
