"""Damaged run folders, made from a real run: a record that lies about its start, and record files (run.json,
prov.json, invocation.json) that are a FIFO, a symbolic link to /dev/zero, or a sparse gigabyte.

`real_run(root)` makes one real run (`snakegate run` on tabular-profile's example) in a registry;
`damaged_copy(run, kind)` copies it to runs/<kind>/ (its record renamed to match) and damages the copy.
`REASON[kind]` is a piece of the reason a listing must give. A reader that waits on the FIFO, reads
/dev/zero or the sparse file whole, or crashes on the date, fails the tests that use these.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from registry_copies import new_run, run_names, snakegate

# kind -> (the damaged file, a piece of the reason the listing gives)
DAMAGES = {
    "started-yesterday": ("run.json", '`started`: "yesterday", which is not a time'),
    "run-json-fifo": ("run.json", "run.json is a FIFO, not a regular file"),
    "run-json-dev-zero": ("run.json", "run.json is a symbolic link, not a file"),
    "run-json-sparse-gigabyte": ("run.json", "run.json is more than"),
    "prov-json-fifo": ("prov.json", "prov.json is a FIFO, not a regular file"),
    "prov-json-dev-zero": ("prov.json", "prov.json is a symbolic link, not a file"),
    "invocation-json-fifo": ("invocation.json", "invocation.json is a FIFO, not a regular file"),
    "invocation-json-dev-zero": ("invocation.json", "invocation.json is a symbolic link, not a file"),
}
REASON = {kind: reason for kind, (_, reason) in DAMAGES.items()}
TIMEOUT = 60  # seconds for one listing: a reader that waits on a FIFO or reads /dev/zero never finishes


def real_run(root: Path) -> Path:
    before = run_names(root)
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(root, before)


def damaged_copy(run: Path, kind: str) -> Path:
    """runs/<kind>/: a copy of `run` whose record names it <kind>, with one file damaged as `kind` says."""
    target = run.parent / kind
    shutil.copytree(run, target, symlinks=True)
    record = json.loads((target / "run.json").read_text())
    record["run_id"] = kind
    if kind == "started-yesterday":
        record["started"] = "yesterday"
    (target / "run.json").write_text(json.dumps(record))
    name = DAMAGES[kind][0]
    path = target / name
    if kind == "started-yesterday":
        return target
    path.unlink()
    if kind.endswith("-fifo"):
        os.mkfifo(path)
    elif kind.endswith("-dev-zero"):
        path.symlink_to("/dev/zero")
    elif kind.endswith("-sparse-gigabyte"):
        with open(path, "wb") as fh:
            fh.truncate(1 << 30)  # a gigabyte of zeros that takes no disk
    return target


def remove(folder: Path) -> None:
    shutil.rmtree(folder)
