"""A fork starts from its parent's outputs, and only from outputs that are still what the parent recorded.

`seed()` copies the parent run's results/ and logs/ into the fork's folder (with their mtimes, so
Snakemake does not re-run the jobs the change leaves alone), re-hashes every copy and compares it
with the sha256 in the parent's PROV record; one difference and the fork is refused, naming the
file and both hashes, so changed data never enters a fork that `verify` would then call ok. A
file the parent's record does not list is not copied (its job simply runs again).

The copies are listed in run.json under `seeded` with the job (rule) that made them and the stat
that shows whether a job of the fork rewrote them, and each gets the fork's own output record
(snakegate.run.guard), which the fork's jobs check it against; `still_reused()` turns that into
run.json's `reused: [{path, sha256, rule}]` once the fork has run. The parent's record has proved
itself before (snakegate.run.integrity, in the runner). Nothing here starts Snakemake.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from snakegate.provenance import runstore
from snakegate.provenance.hashing import sha256_file

SEEDED_KEY = "seeded"
SEEDED_FOLDERS = ("results", "logs")


class ReuseRefused(Exception):
    """A parent output the fork would reuse differs from the parent's record (or has no record)."""


def _plain(value):
    return value["$"] if isinstance(value, dict) and "$" in value else value


def recorded_outputs(parent: Path, registry_root: Path) -> dict[str, dict]:
    """Absolute path -> {sha256, rule} for every file the parent's PROV record hashed."""
    from snakegate.provenance import compare

    prov = compare.load_prov(parent)  # raises compare.ProvMissing when there is no record
    entities = prov.get("entity") or {}
    activities = prov.get("activity") or {}
    made_by: dict[str, str] = {}
    for rel in (prov.get("wasGeneratedBy") or {}).values():
        entity, activity = rel.get("prov:entity"), rel.get("prov:activity")
        rule = _plain((activities.get(activity) or {}).get("sg:rule"))
        if entity and isinstance(rule, str):
            made_by[entity] = rule
    # a parent that was itself a fork copied some files; its run.json says which job made them
    reused = {r.get("path"): r.get("rule") for r in runstore.read_run(parent).get("reused") or []
              if isinstance(r, dict)}
    out: dict[str, dict] = {}
    for ident, attrs in entities.items():
        digest, path = compare.sha256_of(attrs), compare.path_of(attrs)
        if not digest or not path:
            continue
        absolute = os.path.abspath(path if os.path.isabs(path) else os.path.join(registry_root, path))
        rel = os.path.relpath(absolute, os.path.abspath(parent))
        out[absolute] = {"sha256": digest, "rule": made_by.get(ident) or reused.get(rel)}
    return out


def seed(parent: Path, run_dir: Path, registry_root: Path) -> list[dict]:
    """Copy and check the parent's outputs; returns the `seeded` entries, raises ReuseRefused."""
    from snakegate.provenance import compare

    parent, run_dir = Path(parent), Path(run_dir)
    try:
        recorded = recorded_outputs(parent, registry_root)
    except compare.ProvMissing as exc:
        raise ReuseRefused(f"run {parent.name} has no readable provenance record ({exc}), so the outputs a fork "
                           "would reuse cannot be checked; rerun it first, or run the changed config with "
                           "`snakegate run`") from None
    seeded, changed = [], []
    for sub in _seeded_folders(parent, run_dir):
        for src in sorted((parent / sub).rglob("*")) if (parent / sub).is_dir() else []:
            if src.is_symlink() or not src.is_file():
                continue
            record = recorded.get(os.path.abspath(src))
            if record is None:
                continue
            rel = src.relative_to(parent).as_posix()
            dest = run_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            digest = sha256_file(dest, use_cache=False)  # the bytes the fork will reuse, not the parent's
            if digest != record["sha256"]:
                changed.append(f"{_shown(src, registry_root)} (recorded sha256 {record['sha256'][:12]}…, now "
                               f"{digest[:12]}…)")
                continue
            st = dest.stat()
            # the fork's own record of the copy: its jobs' inputs are checked against it (guard.py, imported
            # here: it imports Snakemake, which the front end need not load to start a run)
            from snakegate.run import guard

            guard.write_record(run_dir, rel, digest, st.st_size,
                               f"{record['rule'] or 'a job'} of run {parent.name} (reused)")
            seeded.append({"path": rel, "sha256": digest, "rule": record["rule"], "parent_path": src.as_posix(),
                           "mtime_ns": st.st_mtime_ns, "inode": st.st_ino, "size": st.st_size})
    if changed:
        raise ReuseRefused(f"{len(changed)} output(s) of run {parent.name} differ from its provenance record, so "
                           f"the fork would reuse changed data: {'; '.join(changed)}. `snakegate verify "
                           f"{parent.name}` lists them; rerun the parent or run the changed config from scratch")
    return seeded


def _seeded_folders(parent: Path, run_dir: Path) -> list[str]:
    """results/ and logs/ of a run; of a plan run, those of every step the fork runs with the same workflow
    (a replaced step's files are never reused)."""
    parent_plan = runstore.read_json(parent / runstore.INVOCATION_JSON)
    if parent_plan.get("kind") != "plan":
        return list(SEEDED_FOLDERS)
    mine = (runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}).get("steps") or {}
    theirs = (parent_plan.get("invocation") or {}).get("steps") or {}
    return [f"steps/{name}/{sub}" for name, step in sorted(theirs.items())
            if (mine.get(name) or {}).get("workflow") == (step or {}).get("workflow") for sub in SEEDED_FOLDERS]


def _shown(path: Path, root: Path) -> str:
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return str(path) if rel.startswith("..") else rel


def still_reused(run_dir: Path, seeded: list[dict]) -> list[dict]:
    """The seeded files no job of the fork rewrote (same inode, mtime and size as when copied)."""
    out = []
    for entry in seeded or []:
        try:
            st = (Path(run_dir) / entry["path"]).stat()
        except (OSError, KeyError, TypeError):
            continue
        if (st.st_ino, st.st_mtime_ns, st.st_size) == (entry.get("inode"), entry.get("mtime_ns"), entry.get("size")):
            out.append({"path": entry["path"], "sha256": entry["sha256"], "rule": entry.get("rule")})
    return out
