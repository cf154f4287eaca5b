"""Where a run's workflow copy came from: the registry's git commit and the workflow folder's tree at the moment
the copy was made, kept beside the copy (runs/<id>/source.json, a plan step's in runs/<id>/steps/<s>/).

A run executes its immutable copy of the gated workflow folder (snakegate/run/pinning.py), so the record must
name the snapshot that copy is, not whatever the registry holds when the record is written: a rerun of an old
run executes the old run's copy while the registry's HEAD has moved on. `record()` is called when the copy is
made: from the registry's folder it reads git (the commit, whether the work tree was dirty, the folder's tree
SHA and whether the folder differed from it); from another run's copy (a rerun, a fork) it carries that run's
source over and names the run it came through. `read()` gives it back; capture.py records it as the pinned
snapshot and the registry's current state beside it.

Writes only source.json, next to the copy; reads git through gitinfo.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.provenance import gitinfo, runstore

COPY_DIR = "workflow"  # as snakegate/run/pinning.py names a run's copy
FIELDS = ("commit", "branch", "dirty", "workflow_path", "tree", "tree_dirty", "git", "via_run")


def of_git(folder: Path) -> dict:
    """The git facts of a workflow folder as it is now (the repository around it, if any)."""
    git = gitinfo.git_state(Path(folder), Path(folder))
    if not git.available or not git.commit:
        return {"git": git.reason or "no git"}
    return {"commit": git.commit, "branch": git.branch, "dirty": git.dirty, "workflow_path": git.workflow_path,
            "tree": git.workflow_tree, "tree_dirty": git.workflow_dirty}


def read(folder: Path) -> dict | None:
    """The source.json of a run folder (or a plan step's folder), or None when it has none (older runs)."""
    data = runstore.read_json(Path(folder) / runstore.SOURCE_JSON)
    return {k: data.get(k) for k in FIELDS if k in data} or None


def _copy_of_run(source: Path) -> tuple[Path, Path] | None:
    """(folder holding the copy's source.json, run folder) when `source` is a run's workflow copy
    (runs/<id>/workflow/ or runs/<id>/steps/<s>/workflow/), else None."""
    if source.name != COPY_DIR:
        return None
    home = source.parent
    if (home / runstore.RUN_JSON).is_file():
        return home, home
    if home.parent.name == "steps" and (home.parent.parent / runstore.RUN_JSON).is_file():
        return home, home.parent.parent
    return None


def record(copy_home: Path, source: Path) -> dict:
    """Write source.json into `copy_home` (the folder that holds the copy, `workflow/`) for a copy made from
    `source`: a registry folder (git as it is now), or another run's copy (that run's source, `via_run` it)."""
    source = Path(source)
    earlier = _copy_of_run(source)
    if earlier is not None:
        home, run_dir = earlier
        found = read(home) or {"git": f"run {run_dir.name}, whose copy this is, recorded no source"}
        data = {**{k: v for k, v in found.items() if k != "via_run"}, "via_run": run_dir.name}
    else:
        data = of_git(source)
    runstore.write_json_atomic(Path(copy_home) / runstore.SOURCE_JSON, data)
    return data
