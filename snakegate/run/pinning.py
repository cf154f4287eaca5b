"""What runs is what was gated: the run folder's immutable workflow copy and the invocation pin that
travels to Snakemake outside the config file.

- `make_copy()` writes runs/<run_id>/workflow/: the workflow folder without test/, byte for byte,
  verified against the invocation's content hash and made read-only, and source.json beside it: the git
  commit and tree it was copied from (provenance/snapshot.py). It is made once, beside its
  final place and then renamed, so a reader never sees half a copy. The top-level Snakefile
  includes the Snakefile from there, so editing workflows/<id>/ never reaches a running or
  recorded run, and rerun/fork/export read the workflow from the run folder.
- `EXPECTED_ENV` carries the invocation id that `snakegate run` gated to its Snakemake child
  only; the top-level Snakefile refuses a config that resolves to any other id. Inside a cluster
  job the run folder's invocation.json (written by the head) is the pin instead.
- The inputs a run reads are its staged copies (snakegate.run.stage), checked before each job and
  after the last one.

It never runs Snakemake and writes nothing outside the run folder it is given.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from snakegate.provenance import runstore
from snakegate.provenance.hashing import workflow_files, workflow_hash
from snakegate.registry.workflows import Registry, RegistryError, Workflow, load_workflow
from snakegate.run.handshake import EXPECTED_ENV  # noqa: F401 - pinning.EXPECTED_ENV names the pin

COPY_DIR = "workflow"


class PinError(Exception):
    """The copy cannot be made or no longer matches the invocation; the message says which and why."""


def copy_of(run_dir: Path) -> Path:
    return Path(run_dir) / COPY_DIR


def make_copy(source: Path, run_dir: Path, expected_hash: str) -> Path:
    """Copy the workflow folder `source` (without test/) to runs/<run_id>/workflow/, read-only,
    and prove it hashes to `expected_hash`. An existing copy is verified, never replaced."""
    dest = copy_of(run_dir)
    if dest.exists():
        verify_copy(dest, expected_hash)
        return dest
    tmp = Path(run_dir) / f".{COPY_DIR}.tmp-{os.getpid()}"
    remove_tree(tmp)
    source = Path(source)
    try:
        for src in workflow_files(source):
            target = tmp / src.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)  # the bytes, following a symlink as the hash does
            executable = os.stat(src).st_mode & stat.S_IXUSR
            os.chmod(target, 0o555 if executable else 0o444)
        tmp.mkdir(parents=True, exist_ok=True)  # a workflow folder with no file at all still gets its copy
    except OSError as exc:
        remove_tree(tmp)
        raise PinError(f"cannot copy the workflow folder {source} into {dest}: {exc.strerror or exc}") from None
    actual = workflow_hash(tmp)
    if actual != expected_hash:
        remove_tree(tmp)
        raise PinError(f"the workflow folder {source} changed after the gate (content hash now {actual[:12]}…, "
                       f"the gate approved {expected_hash[:12]}…); restore it, or run again to gate what is there now")
    try:
        os.rename(tmp, dest)
    except OSError:  # another process made the copy first: use theirs once it proves the same
        remove_tree(tmp)
        verify_copy(dest, expected_hash)
        return dest
    _read_only_folders(dest)
    _record_source(Path(run_dir), source)
    return dest


def _record_source(run_dir: Path, source: Path) -> None:
    """source.json beside the copy: the git commit and tree it was made from (provenance/snapshot.py), so the
    record names the snapshot that ran however the registry moves on. Never stops a run: git is a fact about it."""
    from snakegate.provenance import snapshot

    try:
        snapshot.record(run_dir, source)
    except Exception:  # noqa: BLE001, S110 - an unreadable repository, a full disk: the record says no source
        pass


def verify_copy(dest: Path, expected_hash: str) -> None:
    actual = workflow_hash(dest)
    if actual != expected_hash:
        raise PinError(f"the run's workflow copy {dest} no longer matches the invocation (content hash "
                       f"{actual[:12]}…, the invocation pins {expected_hash[:12]}…)")


def _read_only_folders(top: Path) -> None:
    # files were made read-only as they were copied; folders last, or nothing could be written in them
    for dirpath, _dirs, _files in os.walk(top, topdown=False):
        os.chmod(dirpath, 0o555)


def remove_tree(path: Path) -> None:
    """Remove a folder that may hold a read-only workflow copy (a plain rmtree fails on those for
    anyone but root). Missing is fine."""
    path = Path(path)
    if not os.path.lexists(path):
        return
    if path.is_dir() and not path.is_symlink():
        for dirpath, _dirs, _files in os.walk(path):
            try:
                os.chmod(dirpath, 0o755)
            except OSError:
                pass
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def load_copy(run_dir: Path, workflow_id: str) -> Workflow:
    """The workflow a run executes, read from its copy."""
    folder = copy_of(run_dir)
    if not (folder / "workflow.yaml").is_file():
        raise PinError(f"run folder {run_dir} has no workflow copy ({folder}); it was not started by snakegate "
                       "or the copy was removed")
    try:
        return load_workflow(folder, expected_id=workflow_id)
    except RegistryError as exc:
        raise PinError(f"the run's workflow copy cannot be read: {exc.message}") from None


def run_workflow(run_dir: Path) -> Workflow | None:
    """The workflow copy of a recorded run, or None when the run has none (runs made before copies)."""
    run_dir = Path(run_dir)
    wf_id = runstore.read_run(run_dir).get("workflow") or \
        (runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}).get("workflow")
    if not isinstance(wf_id, str):
        return None
    try:
        return load_copy(run_dir, wf_id)
    except PinError:
        return None


def has_copy(run_dir: Path) -> bool:
    """Whether a recorded run holds a workflow copy to run again from (runs made before copies do not)."""
    return (copy_of(run_dir) / "workflow.yaml").is_file()


def registry_of_run(registry: Registry, run_dir: Path, workflow_id: str) -> Registry:
    """The registry a rerun or fork of `run_dir` is gated against: only the run's own workflow copy
    when it has one (whatever workflows/ holds now), else the registry itself. PinError when the
    copy cannot be read."""
    if not has_copy(run_dir):
        return registry
    return pinned_registry(registry, load_copy(run_dir, workflow_id))


def pinned_registry(registry: Registry, wf: Workflow) -> Registry:
    """A registry that holds only `wf`: the gate then proves a config against the pinned copy."""
    return Registry(root=registry.root, workflows={wf.id: wf})
