"""A run's staged inputs as its record says them (runs/<run_id>/inputs.json, written by snakegate.run.stage):
read it, check that it stages exactly the gated inputs, and hand the workflow params that name the copies.

Plain Python and JSON only: the job gate imports it inside every cluster job. Never writes.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

from snakegate.provenance.runstore import INPUTS_DIR, INPUTS_JSON as MANIFEST  # noqa: F401 - names of the record
_PART = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


def read_manifest(run_dir: Path) -> dict[str, dict] | None:
    """inputs.json's entries (key -> {source, path, sha256, size[, gated_sha256]}), or None without one."""
    try:
        with open(Path(run_dir) / MANIFEST, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    entries = data.get("inputs") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else None


def gated_digest(entry: dict) -> str | None:
    """The digest the gate approved for this input (a rewritten sample sheet's copy has its own)."""
    return entry.get("gated_sha256", entry.get("sha256"))


def manifest_problem(entries: dict[str, dict] | None, gated: dict[str, str]) -> str | None:
    """Why a staging record does not stage exactly the gated inputs, or None when it does."""
    if entries is None:
        return "the run folder has no record of its staged inputs (inputs.json)" if gated else None
    if set(entries) != set(gated):
        return "inputs.json does not list exactly the gated inputs"
    for key, want in gated.items():
        entry = entries[key]
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or \
                not isinstance(entry.get("sha256"), str):
            return f"inputs.json's entry for {key} is damaged"
        if gated_digest(entry) != want:
            return f"inputs.json stages {key} with other bytes than the gate approved"
        parts = Path(entry["path"]).parts
        if not parts or parts[0] != INPUTS_DIR or ".." in parts or os.path.isabs(entry["path"]):
            return f"inputs.json stages {key} outside the run's inputs/ folder"
    return None


def key_parts(key: str) -> list[str | int] | None:
    """`params.samples[0].reads` -> ['samples', 0, 'reads']; None for a sample-sheet cell (`[row 2]`)."""
    if not key.startswith("params.") or "[row " in key:
        return None
    parts: list[str | int] = []
    for name, index in _PART.findall(key[len("params."):]):
        parts.append(int(index) if index else name)
    return parts


def staged_params(params: dict, entries: dict[str, dict] | None, run_dir: Path) -> dict:
    """`params` with every input path (nested ones too) replaced by the absolute path of its staged copy."""
    if not entries:
        return params
    out = copy.deepcopy(params)
    for key, entry in entries.items():
        parts = key_parts(key)
        if parts:
            _set(out, parts, str(Path(run_dir) / entry["path"]))
    return out


def _set(obj: Any, parts: list, value: str) -> None:
    for p in parts[:-1]:
        try:
            obj = obj[p]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if isinstance(obj, dict) or (isinstance(obj, list) and isinstance(parts[-1], int) and parts[-1] < len(obj)):
            obj[parts[-1]] = value
    except TypeError:
        return
