"""Stage, then trust: every gated input is copied into the run folder before any job, hashed as it is
copied, and the jobs are handed the copies, never the files in the data roots.

`stage()` copies each input the gate hashed into `runs/<run_id>/inputs/<path>` (the path inside the
registry, or `_abs/<absolute path>` for a data root outside it, so files that sit side by side in a
data root sit side by side here too), computes each copy's sha256 from the bytes it wrote and refuses
(`StageError`, code input_changed) when that is not the digest the gate approved: a file swapped,
rewritten or replaced by a symlink between the gate and the run is never handed to a job. A sample
sheet is handed over as a copy whose path cells name the staged copies of their files (one
absolute path each), so the workflow can reach nothing but staged bytes through it either.
Copies are read-only (0444; their folders stay writable, so a tool may write an index beside its
input inside the run). `runs/<run_id>/inputs.json` records, per invocation input key, the source,
the staged path and the staged bytes' sha256: what the job gate and the job guard check against.

Mode `copy` (the default) tries a reflink first (a copy-on-write clone: free on btrfs and XFS) and
otherwise copies; mode `link` (`[run] stage_inputs = "link"` in snakegate.toml, for inputs too big to
copy) hard-links when the data root and the runs folder share a filesystem: then a file swapped or
replaced in the data root is still never read, and one rewritten in place is caught by the hash
check before each job and at the end of the run, not prevented.

`snakegate run` stages before its gate has finished (`Prestage`): the gate stages each input as soon as it has
resolved it inside the data roots, before its first content check, into a scratch folder of the runs folder
(runs/.staging-<host>-<pid>-<random>/); every check of that input reads the copy (`Prestage.copy`, the gate's
read_input), its digest is the copy's (`Prestage.digest`), and the copies move into the run folder once the gate
accepts. So the source is read once, by the copy, and a source swapped after that is never seen: what was
checked is what was hashed and is what the jobs read (a sample sheet's rewritten copy is made from its staged
copy, too). The scratch folder holds a run lock (provenance.runlock) while its front end lives; one whose lock is
free (the front end died while staging) is removed by the next front end on the same host.

It reads the gated sources once and writes only under runs/<run_id>/inputs/, inputs.json and its own scratch
folder.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import hashlib
import io
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from snakegate.contract import artifacts, sheets
from snakegate.contract.dialect import format_path, iter_nodes
from snakegate.gate import reads
from snakegate.provenance import runstore
from snakegate.provenance.hashing import folder_hash, sha256_file
from snakegate.provenance import known
from snakegate.provenance.runlock import LOCK_FILE, RunLock, lock_is_held
from snakegate.run import nofollow
from snakegate.run.staged import INPUTS_DIR, MANIFEST

MODES = ("copy", "link")
_FICLONE = 0x40049409  # linux/fs.h: clone a whole file (reflink)
_BLOCK = 1 << 20
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)  # the runs folder's disk, not the input


class StageError(Exception):
    """An input cannot be staged, or its staged bytes are not what the gate approved."""

    def __init__(self, message: str, changed: list[dict] | None = None):
        super().__init__(message)
        self.changed = changed or []
        self.errno: int | None = None  # when copying failed: the OSError's
        self.refusal: tuple[str, str, str | None] | None = None  # how the gate words it (gate.reads.Refused)


@dataclass(frozen=True)
class Staged:
    key: str  # invocation input key: params.table, params.samples[row 2].reads
    source: str  # the gated file as the invocation names it (registry-relative or absolute)
    path: str  # the staged copy, relative to the run folder
    sha256: str  # of the staged bytes (a sample sheet's rewritten copy: of the rewrite)
    size: int
    gated_sha256: str  # what the gate hashed (differs from sha256 only for a rewritten sample sheet)

    def record(self) -> dict:
        out = {"source": self.source, "path": self.path, "sha256": self.sha256, "size": self.size}
        if self.gated_sha256 != self.sha256:
            out["gated_sha256"] = self.gated_sha256
        return out


def staged_name(source: Path, registry_root: Path) -> str:
    """Where a source lands under inputs/: its registry-relative path, else `_abs/<absolute path>`."""
    try:
        return source.relative_to(registry_root.resolve()).as_posix()
    except ValueError:
        return "_abs/" + source.as_posix().lstrip("/")


class Prestage:
    """Stage, then gate: the gate's digest of each input (`digest`, its digest_input) is the sha256 of the copy
    written here as the source is read, once, into a scratch folder of the runs folder, because the run folder is
    named after the invocation the digests make. `into()` moves the copies into the run folder, where `stage()`
    records them without copying again; `discard()` removes whatever is left (a refused gate leaves nothing)."""

    def __init__(self, runs_dir: Path, registry_root: Path, mode: str):
        sweep_scratch(Path(runs_dir))
        self.folder = Path(runs_dir) / f"{_scratch_prefix()}{os.getpid()}-{os.urandom(4).hex()}"
        self.root, self.mode = Path(registry_root), mode
        self.done: dict[str, tuple[str, int]] = {}  # source path -> (sha256, size) of its copy
        self._made_runs_dir = not Path(runs_dir).exists()  # a refusal leaves no runs folder it did not find
        self.unwritable: OSError | None = None  # the runs folder could not take a copy (not the input's fault)
        self._lock: RunLock | None = None  # held from the folder's making: the kernel drops it when we die

    def digest(self, key: str, source: Path) -> str:
        if str(source) not in self.done:
            dest = self.folder / INPUTS_DIR / staged_name(Path(source), self.root)
            try:
                if self._lock is None:
                    self._lock = RunLock(self.folder).acquire()
                dest.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self.unwritable = exc
                raise
            try:
                self.done[str(source)] = _stage_one(Path(source), dest, self.mode)
            except StageError as exc:  # the gate refuses an input it cannot read, naming it
                if exc.errno in _FULL:
                    self.unwritable = OSError(exc.errno, os.strerror(exc.errno))
                if exc.refusal:
                    raise reads.Refused(*exc.refusal) from None
                raise OSError(str(exc)) from None
        return self.done[str(source)][0]

    def copy(self, key: str, source: Path) -> Path:
        """The staged copy of `source`, staged (and hashed) now unless it already is: the gate's read_input, so
        its content checks read the bytes it hashes. OSError as `digest`."""
        self.digest(key, source)
        return self.folder / INPUTS_DIR / staged_name(Path(source), self.root)

    def into(self, run_dir: Path) -> dict[str, tuple[str, int]]:
        """The copies moved into `run_dir`/inputs/ in one rename of their folder (each keeps its inode and stamps,
        so the digests remembered for it still hold); what was staged, for `stage(prestaged=...)`."""
        if self.done:
            os.rename(self.folder / INPUTS_DIR, Path(run_dir) / INPUTS_DIR)
        self.discard()
        return self.done

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)  # read-only copies in writable folders
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self._made_runs_dir:
            try:
                self.folder.parent.rmdir()  # only while empty: a run folder made since keeps it
            except OSError:
                pass


def _scratch_prefix() -> str:
    return f".staging-{socket.gethostname()}-"


def sweep_scratch(runs_dir: Path) -> list[str]:
    """Remove the scratch folders of front ends on this host that died while staging (SIGKILL, a power cut):
    their copies would otherwise stay in the runs folder for good. A folder is its front end's while that
    process holds its lock; one whose lock file names a holder and is free is left over. The names removed."""
    prefix, removed = _scratch_prefix(), []
    try:
        names = os.listdir(runs_dir)
    except OSError:
        return removed
    for name in names:
        folder = Path(runs_dir) / name
        if not name.startswith(prefix) or lock_is_held(folder):
            continue
        try:  # an empty lock file: its maker is between taking the lock and naming itself (or died there)
            noted = (folder / LOCK_FILE).stat().st_size > 0
        except OSError:
            continue
        if noted:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(name)
    return removed


def stage(run_dir: Path, input_files: dict[str, str], gated: dict[str, str], schema: dict, params: dict,
          registry_root: Path, mode: str = "copy", prestaged: dict[str, tuple[str, int]] | None = None
          ) -> dict[str, Staged]:
    """Copy every gated input (key -> resolved source path in `input_files`, key -> approved sha256 in
    `gated`) into the run folder and record it; StageError when a copy is not the approved bytes.
    `prestaged` (source path -> (sha256, size), Prestage.into): copies already in place, hashed as written."""
    return stage_steps(run_dir, [("", input_files, gated, schema, params)], registry_root, mode, prestaged)


def stage_steps(run_dir: Path, steps: list[tuple[str, dict, dict, dict, dict]], registry_root: Path,
                mode: str = "copy", prestaged: dict[str, tuple[str, int]] | None = None) -> dict[str, Staged]:
    """`stage()` for the steps of a plan, into one inputs/ folder and one record: each step is
    (key prefix, e.g. `steps.clean.`, input files, gated digests, schema, params); a file two steps take
    is staged once."""
    prestaged = prestaged or {}
    if mode not in MODES:
        raise StageError(f"stage_inputs is {mode!r} in snakegate.toml; use one of: {', '.join(MODES)}")
    run_dir = Path(run_dir)
    root = Path(registry_root)
    staged: dict[str, Staged] = {}
    by_source: dict[str, Staged] = {}
    changed: list[dict] = []
    for prefix, input_files, gated, schema, params in steps:
        sheet_keys = _sheet_params(schema, params)
        for key in sorted(gated, key=lambda k: (k in sheet_keys, k)):  # a sheet's files before the sheet
            source = Path(input_files[key])
            name = staged_name(source, root)
            rel = f"{INPUTS_DIR}/{name}"
            if str(source) in by_source:  # two params naming one file: one copy
                entry = by_source[str(source)]
                entry = Staged(prefix + key, entry.source, entry.path, entry.sha256, entry.size, entry.gated_sha256)
                digest = entry.gated_sha256
            elif key in sheet_keys:
                checked = None
                if str(source) in prestaged:  # its plain copy, which the gate checked: a sheet is staged rewritten
                    checked = _read_sheet(run_dir / rel)
                    os.unlink(run_dir / rel)
                digest, size, rewritten = _stage_sheet(source, run_dir / rel, sheet_keys[key], prefix, staged,
                                                       run_dir, checked)
                entry = Staged(prefix + key, _shown(source, root), rel, rewritten, size, digest)
                by_source[str(source)] = entry
            else:
                digest, size = prestaged.get(str(source)) or _stage_one(source, run_dir / rel, mode)
                entry = Staged(prefix + key, _shown(source, root), rel, digest, size, digest)
                by_source[str(source)] = entry
            if digest != gated[key]:
                changed.append({"param": prefix + key, "path": entry.source, "gated_sha256": gated[key],
                                "current_sha256": digest, "reason": "changed between the gate and the run"})
            staged[prefix + key] = entry
    if changed:
        raise StageError(changed_text(changed), changed)
    write_manifest(run_dir, staged, mode)
    return staged


def changed_text(changed: list[dict]) -> str:
    parts = [f"{c['param']} = {c['path']} {c['reason']} (gated sha256 {c['gated_sha256'][:12]}…, now "
             f"{(c.get('current_sha256') or 'unreadable')[:12]}{'…' if c.get('current_sha256') else ''})"
             for c in changed]
    return ("input_changed: a gated input is not the file the gate approved, so no job may read it: "
            + "; ".join(parts))


def _shown(source: Path, root: Path) -> str:
    try:
        return source.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(source)


# ---- copying -------------------------------------------------------------------------------------
def _stage_one(source: Path, dest: Path, mode: str) -> tuple[str, int]:
    """(sha256, size) of the staged copy of `source` (a file, or a folder for the `directory` type)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        raise StageError(f"cannot stage {source}: {dest} already exists in the run folder")
    try:
        if source.is_dir():
            return _stage_folder(source, dest)
        if mode == "link" and _hard_link(source, dest):
            return _hash_linked(dest)
        return _copy_file(source, dest)
    except OSError as exc:
        error = StageError(exc.strerror if isinstance(exc, nofollow.NotAFileHere) else  # it names the file
                           f"cannot stage the input {source} into the run folder: {exc.strerror or exc}")
        error.errno = exc.errno
        if isinstance(exc, nofollow.NotAFileHere):  # what validate says of such a folder; else a swap just now
            error.refusal = (("format", exc.problem, None) if exc.problem else
                             ("input_changed", exc.strerror, reads.CHANGED_HINT))
        raise error from None


def _hard_link(source: Path, dest: Path) -> bool:
    """Hard-link the data root's file itself: the link is made of the path's own entry (never through a link
    there), and must be the very inode the path led to, reached without a link (nofollow.open_file)."""
    fd = nofollow.open_file(source)
    try:
        try:
            os.link(source, dest, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP):
                return False  # another filesystem, or the kernel's protected_hardlinks: copy instead
            raise
        linked, opened = os.lstat(dest), os.fstat(fd)
        if (linked.st_dev, linked.st_ino) != (opened.st_dev, opened.st_ino):  # a folder on the way swapped
            os.unlink(dest)
            raise nofollow.NotAFileHere(errno.ELOOP, f"{source} changed while it was linked into the run; run "
                                                     "again once nothing is writing the data root")
        return True
    finally:
        os.close(fd)


def _copy_file(source: Path, dest: Path) -> tuple[str, int]:
    """Copy (a reflink when the filesystem can) and hash the bytes written, in one read of the source. The
    copy gets its time and mode through the descriptor it was written by, and its digest is remembered
    for that inode as it then is (snakegate.provenance.known): the job guard, the PROV capture and the seal
    recall it instead of reading it. So is the source's, when nothing touched it while it was read: the PROV
    capture then records the data root's file without reading it again."""
    src_fd = nofollow.open_file(source)  # no link on the way, no FIFO to block on: the file the gate resolved
    try:
        st = os.fstat(src_fd)
        dst_fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                fcntl.ioctl(dst_fd, _FICLONE, src_fd)
                cloned = True
            except OSError:
                cloned = False
            if cloned:
                digest, size = _hash_fd(dst_fd)
            else:
                digest, size = hashlib.sha256(), 0
                while block := os.read(src_fd, _BLOCK):
                    view = memoryview(block)
                    while view:
                        view = view[os.write(dst_fd, view):]
                    digest.update(block)
                    size += len(block)
                digest = digest.hexdigest()
            os.fsync(dst_fd)
            _keep_time(dst_fd, st)
            os.fchmod(dst_fd, 0o444)
            done = os.fstat(dst_fd)
            known.remember(done, done, digest, size)
            known.remember(st, os.fstat(src_fd), digest, size)
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return digest, size


def _keep_time(dest: Path | int, source_stat: os.stat_result) -> None:
    """The copy keeps the source's modification time, as `cp -p` does: Snakemake decides what is up to date
    by mtime, so a fork's reused outputs stay newer than its freshly staged inputs."""
    os.utime(dest, ns=(source_stat.st_atime_ns, source_stat.st_mtime_ns))


def _hash_fd(fd: int) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    os.lseek(fd, 0, os.SEEK_SET)
    while block := os.read(fd, _BLOCK):
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size


def _hash_linked(path: Path) -> tuple[str, int]:
    """The hard-linked copy hashed, and its digest remembered when nothing touched it while it was read (the
    data root's file and the copy are one inode: a rewrite in place moves its stamps, and it is read again)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        before = os.fstat(fd)
        digest, size = _hash_fd(fd)
        known.remember(before, os.fstat(fd), digest, size)
        return digest, size
    finally:
        os.close(fd)


def _stage_folder(source: Path, dest: Path) -> tuple[str, int]:
    """A folder input (artifact type `directory`): every file copied, the folder hashed as the gate hashes it. A
    link or a special file inside refuses it (nofollow.copy_folder): a link could lead outside the data roots."""
    try:
        nofollow.copy_folder(source, dest)
    except OSError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    for dirpath, _dirs, files in os.walk(dest):
        for name in files:
            os.chmod(Path(dirpath) / name, 0o444)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return folder_hash(dest, use_cache=False), size


# ---- sample sheets -------------------------------------------------------------------------------
def _sheet_params(schema: dict, params: dict) -> dict[str, tuple[str, str]]:
    """Input key of each sample-sheet param with path columns -> (param name, artifact type)."""
    out = {}
    for node in iter_nodes(schema, params):
        row = sheets.row_schema(node.schema)
        if row is not None and sheets.path_columns(row) and isinstance(node.value, str) and not node.is_key:
            out[format_path(("params",) + node.parts)] = (format_path(node.parts), node.schema.get("x-artifact"))
    return out


def _read_sheet(path: Path) -> tuple[bytes, os.stat_result]:
    try:
        return path.read_bytes(), path.stat()
    except OSError as exc:
        raise StageError(f"cannot stage the sample sheet {path}: {exc.strerror or exc}") from None


def _stage_sheet(source: Path, dest: Path, sheet: tuple[str, str], prefix: str, staged: dict[str, Staged],
                 run_dir: Path, checked: tuple[bytes, os.stat_result] | None = None) -> tuple[str, int, str]:
    """(sha256 of the sheet as gated, size of the copy, sha256 of the copy): the copy names, in each path
    cell, the absolute path of that cell's staged file; every other byte of every row is kept. `checked`: the
    bytes and stat of the sheet's prestaged copy (what the gate checked and hashed), else the source is read."""
    name, type_name = sheet
    raw, source_stat = checked or _read_sheet(source)
    gated_digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise StageError(f"cannot stage the sample sheet {source}: it is not UTF-8 text") from None
    header, rows = sheets.read_rows(text, artifacts.delimiter(type_name))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=artifacts.delimiter(type_name), lineterminator="\n")
    writer.writerow(header)
    for n, (_line, cells) in enumerate(rows, start=1):
        record = []
        for column in header:
            cell = cells.get(column, "")
            entry = staged.get(prefix + sheets.input_key(name, n, column))
            record.append(str(run_dir / entry.path) if entry is not None and cell else cell)
        writer.writerow(record)
    data = out.getvalue().encode("utf-8")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    _keep_time(dest, source_stat)
    os.chmod(dest, 0o444)
    return gated_digest, len(data), hashlib.sha256(data).hexdigest()


# ---- the record ----------------------------------------------------------------------------------
def write_manifest(run_dir: Path, staged: dict[str, Staged], mode: str) -> None:
    runstore.write_json_atomic(Path(run_dir) / MANIFEST,
                               {"mode": mode, "inputs": {k: v.record() for k, v in sorted(staged.items())}})


def recheck(run_dir: Path, entries: dict[str, dict] | None, registry_root: Path) -> list[dict]:
    """Every staged copy hashed again from its bytes: one entry per copy that is no longer what was staged,
    {param, path (from the registry root, as run.json names files), gated_sha256, current_sha256, reason}.
    Reads the copies, writes nothing."""
    changed: list[dict] = []
    seen: dict[str, str | None] = {}
    for key, entry in sorted((entries or {}).items()):
        path = Path(run_dir) / entry["path"]
        if entry["path"] not in seen:
            seen[entry["path"]] = current_digest(path)
        current = seen[entry["path"]]
        if current != entry.get("sha256"):
            changed.append({"param": key, "path": _shown(path, Path(registry_root)), "gated_sha256": entry.get("sha256"),
                            "current_sha256": current,
                            "reason": "was changed in the run folder during the run" if current
                            else "was removed from the run folder during the run"})
    return changed


def current_digest(path: Path) -> str | None:
    """sha256 of what is at `path` now (a folder hashed as the gate hashes one), None when unreadable."""
    try:
        if path.is_dir():
            return folder_hash(path, use_cache=False)
        # every byte read (never a cached digest); the digest is then remembered under the copy's stamps,
        # where the PROV record and the seal of the same process find it instead of reading the copy again
        before = os.stat(path)
        digest = sha256_file(path, use_cache=False)
        known.remember(before, os.stat(path), digest, before.st_size)
        return digest
    except OSError:
        return None
