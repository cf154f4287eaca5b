"""The files a run touched, as PROV entities: content-addressed identifiers, path, size, sha256.

A file entity is `file:<sha256>/<path relative to the registry root>` (or
`abs:<sha256>/<absolute path>` outside the registry): the same path with other
bytes, in another registry or after a change, is another entity, and the same
bytes at two paths are two entities (each generated once). A file that does
not exist has no digest: `file:absent/<path>`. Every entity is a
`wfprov:Artifact` with its path as `prov:location`, and `schema:contentSize` (bytes)
and `schema:sha256` when it exists; a declared output is `wfprov:describedByParameter`
the workflow's output (`plan:output/<name>`). With host paths left out
(`record_hostname = false`) a file outside the registry is named by its file name.

The run folder is walked and hashed once, in one tight loop (interleaving
hashing with building the document costs twice as much on big runs); a large
file the staging or the end-of-run recheck hashed and nobody touched since (a
staged copy, its source: known.py) is recalled, not read; other files are
hashed through hashing.sha256_file. Only reads files.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import NamedTuple

from snakegate.provenance import known, runstore
from snakegate.provenance.document import Document, Q, local
from snakegate.provenance.hashing import sha256_file

# Files of the run folder that are snakegate's bookkeeping, not the workflow's outputs.
BOOKKEEPING = frozenset({runstore.RUN_JSON, runstore.CONFIG_YAML, runstore.INVOCATION_JSON, runstore.SNAKEMAKE_LOG,
                         runstore.ORIGIN_JSON, runstore.LOCK_FILE, runstore.HEARTBEAT_FILE, runstore.CONSOLE_LOG,
                         "prov.json", "prov.provn", "prov.ttl", runstore.INPUTS_JSON, runstore.SEAL_JSON,
                         runstore.SOURCE_JSON})
# Folders of the run folder that are not the workflow's outputs (the executed copy of the workflow).
# jobs/: what each job recorded of itself (jobfacts.py); inputs/: the staged inputs (used, never made by a job);
# hashes/: each output's sha256 as its job recorded it; jobio/: each job's named files and times as the guard saw them
BOOKKEEPING_DIRS = frozenset({"workflow", "jobs", runstore.INPUTS_DIR, runstore.HASHES_DIR, runstore.JOBIO_DIR})
ARTIFACT = Q("wfprov:Artifact")
OUTSIDE = "<outside the registry>"
_UNNORMAL = ("/./", "/../", "//")


class FileInfo(NamedTuple):
    ident: str
    path: str  # relative to the registry root (posix) or absolute
    sha256: str | None


def digest_of(path: str) -> tuple[int, str] | None:
    """(size, sha256) of a regular file, or None when it is missing or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size <= 1 << 20:  # small files (most job outputs and logs): one read, no buffering layer
            return st.st_size, hashlib.sha256(os.read(fd, st.st_size + 1)).hexdigest()
    finally:
        os.close(fd)
    # large files (inputs, mostly): the digest the staging or the end-of-run recheck took while the file is
    # untouched since (known.py), else a streamed hash
    found = known.recall(path)
    if found is not None:
        return found[1], found[0]
    try:
        return os.stat(path).st_size, sha256_file(path)
    except OSError:
        return None


def _digest_regular(path: str) -> tuple[int, str] | None:
    """(size, sha256) of a file known to be regular (from a directory scan): no stat needed."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 1 << 20)
        digest = hashlib.sha256(data)
        size = len(data)
        while data:
            data = os.read(fd, 1 << 20)
            digest.update(data)
            size += len(data)
        return size, digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def under(path: str, base: str) -> str | None:
    """`path` relative to `base` when it lies inside it (both normalised absolute strings), else None."""
    if path.startswith(base) and path[len(base):len(base) + 1] == os.sep:
        return path[len(base) + 1:]
    return None


class Files:
    """File entities of one document, created once per (path, content)."""

    def __init__(self, doc: Document, registry_root: Path, workdir: Path, run_dir: Path,
                 declared: dict[str, tuple[str, str | None]], host_paths: bool = True):
        self.doc = doc
        # False (`record_hostname = false`): a file outside the registry is named by its file name only
        self.host_paths = host_paths
        self.root, self.workdir, self.run_dir = (os.path.abspath(p) for p in (registry_root, workdir, run_dir))
        self.declared = declared  # absolute path -> (declared output name, type)
        self.by_path: dict[str, FileInfo] = {}
        self._abs: dict[str, str] = {}
        self._walked: list[str] | None = None
        self._digests: dict[str, tuple[int, str]] = {}

    # paths ---------------------------------------------------------------------------------------
    def abspath(self, path: str) -> str:
        """A path as Snakemake wrote it, made absolute and normal (cached: paths repeat across jobs)."""
        cached = self._abs.get(path)
        if cached is None:
            if path.startswith("/"):
                cached = os.path.normpath(path)
            elif path.startswith(".") or any(part in path for part in _UNNORMAL) or path.endswith("/"):
                cached = os.path.normpath(os.path.join(self.workdir, path))
            else:
                cached = f"{self.workdir}/{path}"
            self._abs[path] = cached
        return cached

    def shown(self, abspath: str) -> tuple[str, str]:
        """(identifier prefix, path attribute): registry-relative inside the registry, else absolute (or, when
        host paths stay out of the record, `<outside the registry>/<file name>`)."""
        rel = under(abspath, self.root)
        if rel is not None:
            return "file", rel
        return ("abs", abspath) if self.host_paths else ("abs", f"{OUTSIDE}/{os.path.basename(abspath)}")

    def key(self, abspath: str) -> str:
        """An output path spelled as Snakemake keys it: relative to the working directory when inside it."""
        rel = under(abspath, self.workdir)
        return abspath if rel is None else rel

    # entities ------------------------------------------------------------------------------------
    def at(self, abspath: str, attrs: dict | None = None, must_exist: bool = False,
           digest: tuple[int | None, str] | None = None) -> str | None:
        """The entity of the file at `abspath` as it is now (or with the given digest); with `must_exist`,
        a missing file gets no entity and None is returned."""
        given = digest is not None
        info = None if given else self.by_path.get(abspath)
        if info is not None:
            if must_exist and info.sha256 is None:
                return None
            if attrs:
                existing = self.doc.elements[info.ident][3]
                for k, v in attrs.items():
                    existing.setdefault(k, v)
            return info.ident
        if digest is None:
            digest = self._digests.get(abspath) or digest_of(abspath)
        if must_exist and digest is None:
            return None
        prefix, path = self.shown(abspath)
        local_path = local(path.lstrip("/")) if prefix == "abs" else local(path)
        ident = f"{prefix}:{digest[1] if digest else 'absent'}/{local_path}"
        entity = {"prov:type": ARTIFACT, "prov:location": path}
        if digest is not None:
            if digest[0] is not None:
                entity["schema:contentSize"] = digest[0]
            entity["schema:sha256"] = digest[1]
        declared = self.declared.get(abspath)
        if declared:
            entity["sg:declaredOutput"] = declared[0]
            entity["wfprov:describedByParameter"] = Q(f"plan:output/{local(declared[0])}")
            if declared[1]:
                entity["sg:artifactType"] = declared[1]
        if attrs:
            for k, v in attrs.items():
                entity.setdefault(k, v)
        if not given:  # an explicit digest names another version (the gated input): not the file as it is now
            self.by_path[abspath] = FileInfo(ident, path, digest[1] if digest else None)
        elements = self.doc.elements
        if ident in elements:
            self.doc.entity(ident, entity)
        else:
            elements[ident] = ["entity", None, None, entity]
        return ident

    def entity(self, path: str, attrs: dict | None = None, must_exist: bool = False) -> str | None:
        return self.at(self.abspath(path), attrs, must_exist)

    def run_files(self) -> list[str]:
        """Every regular file the workflow left in the run folder (bookkeeping and hidden files and the
        executed workflow copy excluded), sorted. Walked and hashed once."""
        if self._walked is not None:
            return self._walked
        out: list[str] = []
        stack = [self.run_dir]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            top = folder == self.run_dir
            subdirs = []
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not (top and name in BOOKKEEPING_DIRS):
                        subdirs.append(entry.path)
                elif entry.is_file() and not (top and name in BOOKKEEPING):
                    out.append(entry.path)
            stack.extend(reversed(subdirs))
        out.sort()
        self._walked = out
        digests = self._digests
        for path in out:
            digest = _digest_regular(path)
            if digest is not None:
                digests[path] = digest
        return out
