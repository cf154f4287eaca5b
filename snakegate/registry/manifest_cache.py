"""Parsed manifests kept by content, so a registry of hundreds of workflows loads without parsing YAML again.

`<registry>/.snakegate/cache/manifests.json` maps the sha256 of a workflow.yaml's bytes (with the folder
name it was checked against: the id must equal it) to the manifest as parsed and as it passed the meta-schema.
Parsing YAML in pure Python is ~7 ms per manifest and was 89 % of loading a 500-workflow registry; reading and
hashing the bytes is ~0.05 ms. A changed file has another hash, so it is parsed and checked again; an entry
no workflow uses any more is dropped on the next write.

The cache is as trusted as the rest of `.snakegate/` (the run index, the registry key): someone who can
write it can also edit the index. It never holds a manifest that failed the meta-schema. Unreadable or
unwritable, it is ignored: loading is then only slower. Writes only its own file, atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from snakegate.provenance.private import private_path

FOLDER = (".snakegate", "cache")
FILE = "manifests.json"
VERSION = 2  # the layout of an entry; a cache of another version is ignored whole


class ManifestCache:
    def __init__(self, registry_root: Path):
        self.path = Path(registry_root).joinpath(*FOLDER) / FILE
        self.entries: dict[str, Any] = {}
        self.used: set[str] = set()
        self.changed = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("entries"), dict):
            self.entries = data["entries"]

    @staticmethod
    def key(raw: bytes, folder_name: str) -> str:
        return f"{hashlib.sha256(raw).hexdigest()}:{folder_name}"

    def get(self, key: str) -> dict | None:
        found = self.entries.get(key)
        if isinstance(found, dict):
            self.used.add(key)
            return found
        return None

    def put(self, key: str, data: dict) -> None:
        self.entries[key] = data
        self.used.add(key)
        self.changed = True

    def save(self) -> None:
        """Write the entries this load used (only when something changed); best effort."""
        if not self.changed and set(self.entries) == self.used:
            return
        # Never sort_keys: a manifest's mapping order is meaningful (outputs, params and the questions
        # the guided dialogue asks come in the author's order), and JSON keeps insertion order.
        payload = json.dumps({"version": VERSION, "entries": {k: self.entries[k] for k in sorted(self.used)}},
                             separators=(",", ":"))
        folder = self.path.parent
        try:
            private_path(folder)
            tmp = folder / f".{FILE}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, payload.encode("utf-8"))
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only registry loads as before, only slower
