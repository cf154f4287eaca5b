"""Cheap format checks for input artifacts, one per kind of check a type names: the built-in types of
snakegate/schemas/artifact-types.json and a registry's own (snakegate.toml `[types.<name>]`, in the form
snakegate/schemas/artifact-type.schema.json describes; snakegate.metaschemas.artifact_types has both).

Each check reads at most the first 64 KiB of the file and returns None when
the file looks right or a sentence saying what is wrong. Text is decoded in
the type's `encoding` (default UTF-8). Table headers are
read here too (for `x-column-of`), never the whole table; for an `.npz` archive
the zip directory and each array's header (name, shape, dtype), never the arrays;
for a VCF or GFF3 the sequence (contig) names, when the first 64 KiB prove the
whole list (a preflight compares the naming of two genomic files).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import os
import re
import stat
import zipfile
import zlib
from pathlib import Path

from snakegate.metaschemas import artifact_types

HEAD_BYTES = 64 * 1024
MAX_NPZ_MEMBERS = 1024


def _head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(size)


def _text_head(path: Path, encoding: str = "utf-8") -> str | None:
    raw = _head(path)
    try:
        if b"\x00" in raw and not codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
            return None  # a NUL byte in 8-bit text: a binary file
        # incremental, not final: a multi-byte character cut at the 64 KiB boundary is not an error
        return codecs.getincrementaldecoder(encoding)().decode(raw, final=False)
    except (UnicodeDecodeError, LookupError):  # LookupError: registry types' encodings are checked on load
        return None


def encoding(type_name: str) -> str:
    """The text encoding of a type's files (default UTF-8)."""
    return artifact_types().get(type_name, {}).get("encoding", "utf-8")


def header(path: Path, type_name: str) -> list[str] | None:
    """The header row of a file of table type `type_name`, read with its delimiter and encoding."""
    return table_header(path, delimiter(type_name), encoding(type_name))


def table_header(path: Path, delimiter: str, encoding: str = "utf-8") -> list[str] | None:
    """The header row of a delimited table, or None when the file is not such a table (or unreadable)."""
    try:
        text = _text_head(path, encoding)
    except OSError:
        return None
    if text is None:
        return None
    lines = text.splitlines()
    if len(text) >= HEAD_BYTES and lines:
        lines = lines[:-1]  # the last line may be cut off
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]  # a UTF-8 byte-order mark (Excel's CSVs) is not part of the first name
    rows = list(csv.reader(io.StringIO("\n".join(lines[:6])), delimiter=delimiter))
    if not rows or not rows[0]:
        return None
    # Names exactly as pandas.read_csv reads them (no stripping), so a column the gate accepts
    # is a column the workflow finds.
    header = rows[0]
    if any(not h.strip() for h in header) or len(set(header)) != len(header):
        return None
    if any(len(r) != len(header) for r in rows[1:] if r):
        return None
    if len(header) == 1 and header[0][:1] in "{[":
        return None  # a JSON document is not a one-column table
    return header


def count_rows(path: Path, type_name: str, stop_at: int) -> int | None:
    """Data rows under the header of a delimited table, counting no further than `stop_at`
    (None when unreadable). Reads line by line, never the whole file."""
    try:
        with open(path, encoding=encoding(type_name), errors="replace", newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter(type_name))
            seen_header = False
            rows = 0
            for record in reader:
                if not any(c.strip() for c in record):
                    continue
                if not seen_header:
                    seen_header = True
                    continue
                rows += 1
                if rows >= stop_at:
                    break
            return rows
    except (OSError, csv.Error):
        return None


def check(path: Path, type_name: str) -> str | None:
    """None when `path` passes the cheap check of `type_name`, else what is wrong."""
    try:
        return _check(path, type_name)
    except OSError as exc:  # unreadable (permissions, I/O error): a refusal, never a crash
        return f"cannot be read ({exc.strerror or exc})"


def _check(path: Path, type_name: str) -> str | None:
    spec = artifact_types().get(type_name)
    if spec is None:
        return f"unknown artifact type {type_name!r}"
    kind = spec.get("check", "none")
    text_encoding = spec.get("encoding", "utf-8")
    if kind == "directory":
        return folder_problem(path) if path.is_dir() else f"is not a {type_name}: expected a folder"
    if path.is_dir():
        return f"is a folder, not a {type_name} file"
    if kind == "table":
        return _check_table(path, type_name, spec["delimiter"], text_encoding)
    if kind == "gzip":
        return _check_gzip(path, type_name, spec)
    if kind == "columns":
        return _check_columns(path, type_name, spec, text_encoding)
    text = None if kind in ("magic", "npz", "gff3", "none") else _text_head(path, text_encoding)
    what_text = "UTF-8 text" if text_encoding == "utf-8" else f"text in {text_encoding}"
    if kind == "markup":
        tag = spec["tag"]
        head = (text or "").lstrip().lower()
        if text is None or not (head.startswith(f"<{tag}") or head.startswith("<!doctype " + tag)
                                or (head.startswith("<?xml") or head.startswith("<!doctype")) and f"<{tag}" in head):
            return f"is not {type_name}: expected a document with an <{tag}> element at the top"
        return None
    if kind == "json":
        if text is None or not text.lstrip()[:1] in ("{", "["):
            return f"is not a {type_name}: expected a JSON object or array"
        if path.stat().st_size <= HEAD_BYTES:
            try:
                json.loads(text)
            except json.JSONDecodeError as exc:
                return f"is not valid JSON ({exc.msg} at line {exc.lineno})"
        return None
    if kind == "magic":
        magic = bytes.fromhex(spec["magic"])
        if _head(path, len(magic)) != magic:
            return f"is not a {type_name}: its first bytes are not the {type_name} signature"
        return None
    if kind == "prefix":
        if text is None or not text.lstrip().startswith(spec["prefix"]):
            return f"is not a {type_name}: expected {what_text} starting with {spec['prefix']!r}"
        return None
    if kind == "npz":
        try:
            npz_headers(path)
        except ValueError as exc:
            return f"is not a {type_name}: {exc}"
        return None
    if kind == "gff3":
        return _check_gff3(path, type_name)
    if kind == "text":
        if text is None:
            return f"is not {type_name}: expected {what_text}"
        return None
    return None


def _check_table(path: Path, type_name: str, sep: str, text_encoding: str) -> str | None:
    """A header of unique, non-empty names split by `sep`, and next rows as wide; a file split by the other
    common delimiter is named as such."""
    header = table_header(path, sep, text_encoding)
    other = "\t" if sep == "," else ","
    if header is not None and len(header) == 1 and other in header[0]:
        header = None  # "a\tb" as one column: the wrong delimiter, never a one-column table
    if header is not None:
        return None
    said = {",": "comma", "\t": "tab"}.get(sep, repr(sep))
    wrong = table_header(path, other, text_encoding)
    if wrong is not None and len(wrong) > 1:
        alt = "tsv-table" if other == "\t" else "csv-table"
        return (f"is not a {type_name}: it is {'tab' if other == chr(9) else 'comma'}-separated "
                f"(columns {', '.join(wrong[:5])}{', …' if len(wrong) > 5 else ''}); give a {said}-separated "
                f"file, or declare the param as {alt}")
    what = "UTF-8 text" if text_encoding == "utf-8" else f"text in {text_encoding}"
    return (f"is not a {type_name}: expected {what} whose first line is a {said}-separated header "
            "of unique, non-empty column names and whose next rows have as many fields")


def _check_columns(path: Path, type_name: str, spec: dict, text_encoding: str) -> str | None:
    """Headerless rows (BED, GTF, an edge list): every line in the first 64 KiB that is not blank
    and does not start with the comment mark has `columns` (or at least `min_columns`) fields."""
    lines = _head_lines(path, text_encoding)
    if lines is None:
        return f"is not {type_name}: expected {'UTF-8 text' if text_encoding == 'utf-8' else 'text in ' + text_encoding}"
    sep = spec.get("delimiter", "\t")
    comment = spec.get("comment", "#")
    exact, least = spec.get("columns"), spec.get("min_columns")
    said = {"\t": "tab", ",": "comma"}.get(sep, repr(sep))
    rows = 0
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith(comment):
            continue
        rows += 1
        width = len(line.split(sep))
        if (exact is not None and width != exact) or (least is not None and width < least):
            want = f"{exact}" if exact is not None else f"at least {least}"
            return (f"is not {type_name}: line {number} has {width} {said}-separated field(s), not {want}"
                    + ("; are they separated by spaces?" if sep == "\t" and width == 1 and " " in line else ""))
    if not rows:
        return f"is not {type_name}: no data line in its first {HEAD_BYTES // 1024} KiB"
    return None


GFF3_COLUMNS = "seqid, source, type, start, end, score, strand, phase, attributes"
_WHOLE_NUMBER = re.compile(r"[0-9]{1,18}")


def _head_lines(path: Path, text_encoding: str = "utf-8") -> list[str] | None:
    """The lines of the first 64 KiB (the last one left out when the file goes on: it may be cut), or None
    when that is not text in `text_encoding`."""
    text = _text_head(path, text_encoding)
    if text is None:
        return None
    lines = text.splitlines()
    return lines[:-1] if path.stat().st_size > HEAD_BYTES and lines else lines


def _gff3_records(lines: list[str]):
    """(line number, line) of each feature line: no blank line, comment or directive, nothing from the
    `##FASTA` section on."""
    for number, line in enumerate(lines, 1):
        if line.startswith("##FASTA") or line.startswith(">"):
            return
        if line.strip() and not line.startswith("#"):
            yield number, line


def _check_gff3(path: Path, type_name: str) -> str | None:
    """The version line, then nine tab-separated columns with whole-number 1 <= start <= end on every
    feature line in the first 64 KiB (the script reading the file checks the rest)."""
    lines = _head_lines(path)
    if lines is None:
        return f"is not {type_name}: expected UTF-8 text"
    first = next((line for line in lines if line.strip()), "")
    if not re.match(r"##gff-version\s+3(\.|\s|$)", first):
        return (f"is not {type_name}: its first line is {first[:40]!r}, not '##gff-version 3' (a GTF or GFF2 "
                "file must be converted, e.g. with `gffread -E --keep-genes -o out.gff3 in.gtf`)")
    for number, line in _gff3_records(lines):
        fields = line.split("\t")
        if len(fields) != 9:
            return (f"is not {type_name}: line {number} has {len(fields)} tab-separated column(s), not 9 "
                    f"({GFF3_COLUMNS}); are they separated by spaces?")
        start, end = fields[3], fields[4]
        if not (_WHOLE_NUMBER.fullmatch(start) and _WHOLE_NUMBER.fullmatch(end)
                and 1 <= int(start) <= int(end)):
            return (f"is not {type_name}: line {number} has start {start[:20]!r} and end {end[:20]!r}; "
                    "expected whole numbers with 1 <= start <= end (GFF3 counts from 1, both ends included)")
    return None


_DECLARED_SEQUENCE = {"vcf": re.compile(r"##contig=<ID=([^,>]+)"),
                      "gff3": re.compile(r"##sequence-region\s+(\S+)")}


def sequence_names(path: Path, type_name: str) -> list[str] | None:
    """The sequence (contig) names a genomic file uses, in the order they first appear, when its first 64 KiB
    prove the whole list; None for a type that names no sequences, or when they cannot.

    The list is whole when the whole file lies in the first 64 KiB (every record's name), or when its
    header declares the names (VCF `##contig=<ID=...>`, GFF3 `##sequence-region`) and ends inside them
    (the names of the records seen there are added). A long header or a large file without declarations
    gives None: a preflight must then assume nothing about the naming.
    """
    kind = artifact_types().get(type_name, {}).get("sequences")
    if kind not in _DECLARED_SEQUENCE:
        return None
    try:
        lines = _head_lines(path)
        whole = path.stat().st_size <= HEAD_BYTES
    except OSError:
        return None
    if lines is None:
        return None
    declared = [m.group(1) for line in lines if (m := _DECLARED_SEQUENCE[kind].match(line))]
    if kind == "vcf":
        header_ended = any(line.startswith("#CHROM") for line in lines)
        used = [line.split("\t", 1)[0] for line in lines if line.strip() and not line.startswith("#")]
    else:
        used = [line.split("\t", 1)[0] for _, line in _gff3_records(lines)]
        header_ended = bool(used)
    if not whole and not (declared and header_ended):
        return None
    return list(dict.fromkeys(declared + used))


def npz_headers(path: Path) -> dict[str, dict]:
    """{array name: {"shape": [...], "dtype": "float32"}} from an .npz's zip directory and .npy headers.

    Reads a few hundred bytes per array, never the data; ValueError says what is wrong
    (not a zip, a member that is not a .npy array, an object array that would need pickle).
    """
    import numpy as np  # local: only .npz inputs pay for importing numpy

    if not zipfile.is_zipfile(path):
        raise ValueError("expected a zip archive of .npy arrays (numpy.savez)")
    out: dict[str, dict] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if not members:
                raise ValueError("the archive holds no arrays")
            if len(members) > MAX_NPZ_MEMBERS:
                raise ValueError(f"the archive holds {len(members)} members, more than {MAX_NPZ_MEMBERS}")
            for info in members:
                if not info.filename.endswith(".npy") or info.is_dir():
                    raise ValueError(f"member {info.filename!r} is not a .npy array")
                with archive.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
                    else:
                        raise ValueError(f"array {info.filename!r} uses .npy format {version}, not 1.0 or 2.0")
                if dtype.hasobject:
                    raise ValueError(f"array {info.filename[:-4]!r} holds Python objects (it would need pickle, "
                                     "which is never loaded); save numeric arrays")
                out[info.filename[:-4]] = {"shape": [int(n) for n in shape], "dtype": str(dtype)}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, zlib.error) as exc:
        raise ValueError(f"the zip archive cannot be read ({exc})") from None
    except ValueError:
        raise
    return out


def array_headers(path: Path, type_name: str) -> dict[str, dict] | None:
    """Shapes and dtypes of the arrays in an array-archive artifact; None for other types."""
    if artifact_types().get(type_name, {}).get("check") != "npz":
        return None
    return npz_headers(path)


def _check_gzip(path: Path, type_name: str, spec: dict) -> str | None:
    """gzip magic, then the first decompressed bytes (a few KiB, never the whole file)."""
    if _head(path, 2) != b"\x1f\x8b":
        return f"is not {type_name}: it is not gzip-compressed (no gzip signature)"
    try:
        with gzip.open(path, "rb") as fh:
            inner = fh.read(4096)
    except (OSError, EOFError, zlib.error) as exc:
        return f"is not {type_name}: the gzip stream is damaged ({exc})"
    if "inner_magic" in spec and not inner.startswith(bytes.fromhex(spec["inner_magic"])):
        return f"is not {type_name}: its decompressed content does not start with the {type_name} signature"
    if "inner_prefix" in spec and not inner.lstrip().startswith(spec["inner_prefix"].encode()):
        return f"is not {type_name}: its decompressed text does not start with {spec['inner_prefix']!r}"
    return None


def entry_problem(shown: str, st: os.stat_result) -> str | None:
    """What is wrong with an entry of a folder input (its lstat), said after the folder's name: a folder input is
    copied into the run whole (snakegate.run.nofollow), so it may hold only folders and regular files."""
    if stat.S_ISLNK(st.st_mode):
        return (f"holds a symbolic link, {shown}; a folder input is copied whole and a link could lead outside the "
                "data roots: put the file itself there")
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return f"holds {shown}, which is neither a file nor a folder (a FIFO, socket or device): remove it"
    return None


def folder_problem(folder: Path) -> str | None:
    """The first entry of `folder`, in sorted order, that a folder input may not hold (entry_problem), or None.
    Reads names and stats only, never a file."""
    for dirpath, dirnames, filenames in os.walk(folder):  # never into a linked folder: it is refused here
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            shown = (Path(dirpath) / name).relative_to(folder).as_posix()
            problem = entry_problem(shown, os.lstat(Path(dirpath) / name))
            if problem:
                return problem
    return None


def is_directory(type_name: str) -> bool:
    return artifact_types().get(type_name, {}).get("check") == "directory"


def is_table(type_name: str) -> bool:
    return artifact_types().get(type_name, {}).get("check") == "table"


def delimiter(type_name: str) -> str:
    return artifact_types()[type_name]["delimiter"]


def takes(param_type: str, output_type: str) -> bool:
    """Whether a param of `param_type` can take a file of `output_type` (an earlier step's output): the same
    type, or two tables with the same delimiter (`tsv` and `tsv-table`). Unknown types take only themselves."""
    if param_type == output_type:
        return True
    return (is_table(param_type) and is_table(output_type)
            and delimiter(param_type) == delimiter(output_type))
