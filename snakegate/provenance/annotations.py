"""Model-written annotations of a run (an assessment: a score on a stated rubric, the record's evidence
quoted), kept beside the run's record and never inside it: `<registry>/.snakegate/annotations/<run_id>.jsonl`,
one JSON object per line, appended (0600 in a 0700 folder).

Why there and not in `runs/<id>/`: a run folder is sealed when the run ends (seal.json lists every file and
its sha256; the seal's own sha256 is in the run index), so a file added to it later would make `snakegate
verify` report the record changed; and an annotation is someone's opinion about the record, not part of
what the run wrote. Beside the run index it stays out of the seal, is kept per run, and names the seal it
assessed (`seal_sha256`): an annotation of a record that changed afterwards is known to be about the
earlier one. Every annotation says it is model-written (`written_by: model`, the model, the backend, the
conversation), and `label()` says so in the one line a view shows (`show-run`, the report).

`append()` writes one; `read()` gives a run's annotations, oldest first, each with its `label`, from a
bounded read of a regular file (lines that are not JSON objects are skipped and counted). Nothing in
snakegate reads an annotation to decide what runs: a verdict, a refinement's stop rule and the gate never
look here.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from snakegate.provenance.private import private_path

FOLDER = (".snakegate", "annotations")
MAX_BYTES = 1 << 20          # a run's annotations file read at most this far
MAX_LINE = 16 << 10          # one annotation's JSON line
WRITTEN_BY = "model"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class AnnotationError(Exception):
    """An annotation that cannot be written (a bad run id, a folder that cannot be written, too long)."""


def folder(registry_root: Path) -> Path:
    return Path(registry_root).joinpath(*FOLDER)


def path_of(registry_root: Path, run_id: str) -> Path:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or ".." in run_id:
        raise AnnotationError(f"`{run_id}` is not a run id")
    return folder(registry_root) / f"{run_id}.jsonl"


def append(registry_root: Path, run_id: str, annotation: dict) -> Path:
    """Add one annotation (a JSON object; `written_by: model` is set) to the run's file; its path.
    AnnotationError when it cannot be written."""
    path = path_of(registry_root, run_id)
    line = json.dumps({**annotation, "run_id": run_id, "written_by": WRITTEN_BY}, sort_keys=True,
                      ensure_ascii=False, default=str) + "\n"
    data = line.encode("utf-8")
    if len(data) > MAX_LINE:
        raise AnnotationError(f"the annotation is {len(data):,} bytes; at most {MAX_LINE:,} are kept")
    try:
        private_path(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise AnnotationError(f"{path} is not a regular file")
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise AnnotationError(f"cannot write the annotation to {path}: {exc.strerror or exc}") from None
    return path


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def label(annotation: dict) -> str:
    """One line naming it model-written: `model-written assessment by qwen2.5 (chat), 4/5 on “…”`."""
    who = annotation.get("model") or "an unknown model"
    via = annotation.get("backend")
    scale = annotation.get("scale") if isinstance(annotation.get("scale"), list) else None
    score = _shown(annotation.get("score"))
    if scale and len(scale) == 2:
        score += f" on a scale of {_shown(scale[0])} to {_shown(scale[1])}"
    rubric = " ".join(str(annotation.get("rubric") or "").split())
    rubric = rubric if len(rubric) <= 80 else rubric[:79] + "…"
    return (f"model-written {annotation.get('kind') or 'annotation'} by {who}" + (f" via {via}" if via else "")
            + f": {score}" + (f" for “{rubric}”" if rubric else "") + " (an opinion; it decides nothing)")


def read(registry_root: Path, run_id: str) -> list[dict]:
    """The run's annotations, oldest first, each with `label`; [] when there are none or the file cannot be
    read (a symbolic link, not a regular file). Lines that are not JSON objects are left out and counted
    in the last item's `skipped_lines`."""
    try:
        path = path_of(registry_root, run_id)
    except AnnotationError:
        return []
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, MAX_BYTES)
    except OSError:
        return []
    finally:
        os.close(fd)
    out, skipped = [], 0
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            skipped += 1
            continue
        if not isinstance(item, dict) or item.get("run_id") != run_id:
            skipped += 1
            continue
        item["written_by"] = WRITTEN_BY  # whatever a line claims, this file holds model-written annotations only
        item["label"] = label(item)
        out.append(item)
    if out and skipped:
        out[-1]["skipped_lines"] = skipped
    return out
