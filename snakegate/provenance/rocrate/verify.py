"""Check an exported RO-Crate against its own checksums: `snakegate verify CRATE` (a folder or a .zip).

Every File the crate's metadata describes (ro-crate-metadata.json, `sha256` and `contentSize` written by
export.py) is read from the crate and hashed again; one that is missing, has other bytes or another size is
named. The run's PROV record travels in the crate too (runs/<id>/prov.json): each file it records that the
crate carries at the same path must hash to the sha256 the record holds as well, so an edited output needs
both the metadata and the PROV record rewritten to pass; what neither can show is a crate rewritten whole,
so `verify` prints the metadata's own sha256 to compare with a copy kept elsewhere.

Reads only; never follows a path out of the crate (an `@id` with `..`, an absolute path or a symlink leading
outside is itself a problem) and never extracts a zip.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

METADATA = "ro-crate-metadata.json"
_BLOCK = 1 << 20


class CrateUnreadable(Exception):
    """Not an RO-Crate that can be checked; the message says why."""


@dataclass
class CrateCheck:
    crate: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    metadata_sha256: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def is_crate(path: Path) -> bool:
    """A folder holding ro-crate-metadata.json, or a zip file (checked when read)."""
    path = Path(path)
    return (path.is_dir() and (path / METADATA).is_file()) or (path.is_file() and zipfile.is_zipfile(path))


class _Folder:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    def open(self, rel: str):
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root):
            raise PermissionError(f"{rel} leads out of the crate")
        if not target.is_file():
            raise FileNotFoundError(rel)
        return open(target, "rb")


class _Zip:
    def __init__(self, path: Path):
        self.zf = zipfile.ZipFile(path)
        self.names = set(self.zf.namelist())

    def open(self, rel: str):
        if rel not in self.names:
            raise FileNotFoundError(rel)
        return self.zf.open(rel)


def _digest(store, rel: str) -> tuple[str, int]:
    h, size = hashlib.sha256(), 0
    with store.open(rel) as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
            size += len(block)
    return h.hexdigest(), size


def _safe(ident: str) -> str | None:
    """A File `@id` as a path inside the crate, or None when it is a web IRI or a contextual id."""
    if not isinstance(ident, str) or ident.startswith("#") or "://" in ident or ident.startswith(("urn:", "mailto:")):
        return None
    return ident


def _types(entity: dict) -> set[str]:
    kind = entity.get("@type")
    return set(kind) if isinstance(kind, list) else {kind}


def verify_crate(path: Path) -> CrateCheck:
    """Hash every File the crate describes and compare with its metadata and with the run's PROV record in it."""
    path = Path(path)
    if path.is_dir():
        store = _Folder(path)
    elif path.is_file() and zipfile.is_zipfile(path):
        store = _Zip(path)
    else:
        raise CrateUnreadable(f"{path} is neither a crate folder (with {METADATA}) nor a zip file")
    result = CrateCheck(crate=str(path))
    try:
        with store.open(METADATA) as fh:
            raw = fh.read()
    except (FileNotFoundError, PermissionError, KeyError):
        raise CrateUnreadable(f"{path} has no {METADATA}: not an RO-Crate") from None
    result.metadata_sha256 = hashlib.sha256(raw).hexdigest()
    try:
        graph = json.loads(raw).get("@graph")
    except (ValueError, AttributeError):
        raise CrateUnreadable(f"{path}/{METADATA} is not JSON-LD with a @graph") from None
    if not isinstance(graph, list):
        raise CrateUnreadable(f"{path}/{METADATA} has no @graph list")
    described: dict[str, str] = {}
    for entity in graph:
        if not isinstance(entity, dict) or "File" not in _types(entity):
            continue
        rel = _safe(entity.get("@id"))
        if rel is None:
            continue
        norm = posixpath.normpath(rel)
        if norm.startswith("../") or norm == ".." or os.path.isabs(rel):
            result.problems.append(f"{rel}: the metadata names a file outside the crate")
            continue
        result.checked += 1
        want, size = entity.get("sha256"), entity.get("contentSize")
        try:
            have, have_size = _digest(store, norm)
        except FileNotFoundError:
            result.problems.append(f"{rel}: missing from the crate (its metadata records sha256 {str(want)[:12]}…)")
            continue
        except (PermissionError, OSError) as exc:
            result.problems.append(f"{rel}: cannot be read inside the crate ({exc})")
            continue
        described[norm] = have
        if not want:
            result.problems.append(f"{rel}: the metadata records no sha256 for it")
        elif have != want:
            result.problems.append(f"{rel}: content changed (the metadata records sha256 {want[:12]}…, the file "
                                   f"hashes to {have[:12]}…)")
        if size is not None and str(size) != str(have_size):
            result.problems.append(f"{rel}: size changed (the metadata records {size} bytes, the file has "
                                   f"{have_size})")
    _against_prov(store, described, result)
    return result


# the run folder's records export.py copies with sensitive values scrubbed out: their crate copy may differ from
# the bytes the PROV record hashed (the metadata's sha256 is of the copy, and is checked above)
_SCRUBBED_RECORDS = ("config.yaml", "invocation.json", "run.json", "snakemake.log", "origin.json")


def _scrubbable(where: str, prov_path: str) -> bool:
    return posixpath.dirname(where) == posixpath.dirname(prov_path) and posixpath.basename(where) in _SCRUBBED_RECORDS


def _against_prov(store, described: dict[str, str], result: CrateCheck) -> None:
    """Each file the crate's PROV record(s) hash that the crate carries at the same path must have those bytes."""
    for rel in sorted(p for p in described if p.endswith("/prov.json") and p.startswith("runs/")):
        try:
            with store.open(rel) as fh:
                prov = json.loads(fh.read())
        except (OSError, ValueError):
            result.problems.append(f"{rel}: the run's PROV record in the crate cannot be read")
            continue
        for attrs in (prov.get("entity") or {}).values() if isinstance(prov, dict) else ():
            if not isinstance(attrs, dict):
                continue
            where = attrs.get("prov:location") or attrs.get("sg:path")
            digest = attrs.get("schema:sha256") or attrs.get("sg:sha256")
            if isinstance(where, str) and isinstance(digest, str) and where in described \
                    and described[where] != digest and not _scrubbable(where, rel):
                result.problems.append(f"{where}: the run's PROV record in the crate holds sha256 {digest[:12]}…, "
                                       f"the crate's file hashes to {described[where][:12]}…")
