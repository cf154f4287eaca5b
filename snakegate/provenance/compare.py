"""Reading runs back from their records: verify a run's files, compare two runs, plan a fork.

Everything here works from the run folders alone (prov.json, invocation.json,
run.json and the files); nothing is written. `verify()` re-hashes every file
prov.json recorded and the workflow folder; `diff_runs()` lists parameter,
output-hash and JSON-value differences, and for CSV/TSV outputs the rows and cells that changed
(tablediff.py); `output_status()` says per declared
output whether two runs made the same bytes; `changed_rules()` compares two
DAGs (plain job dicts) by rule.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.provenance import runstore
from snakegate.provenance import tablediff
from snakegate.provenance.hashing import workflow_hash

TABLE_SUFFIXES = (".csv", ".tsv", ".tab")


class ProvMissing(Exception):
    """The run has no (readable) prov.json."""


def load_prov(run_dir: Path) -> dict:
    path = Path(run_dir) / "prov.json"
    try:
        data = json.loads(runstore.read_record(path))  # a regular file up to the cap: never a FIFO or /dev/zero
    except runstore.RecordUnreadable as exc:
        raise ProvMissing(f"{path}: {exc}") from None
    except FileNotFoundError:
        record = runstore.read_run(run_dir)
        raise ProvMissing(f"run {Path(run_dir).name} has no provenance record (status: "
                          f"{record.get('status', 'unknown')}); it is written when Snakemake finishes the run"
                          + (f" — the last attempt said: {record['provenance_error']}"
                             if record.get("provenance_error") else "")) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProvMissing(f"{path} is not valid PROV-JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ProvMissing(f"{path} is not a PROV-JSON document")
    return data


def plain(value: Any) -> Any:
    """A PROV-JSON attribute value without its type wrapper ({"$": "10", "type": "xsd:int"} -> 10)."""
    if isinstance(value, dict) and "$" in value:
        raw, kind = value["$"], value.get("type", "")
        if kind in ("xsd:int", "xsd:long", "xsd:integer"):
            try:
                return int(raw)
            except (TypeError, ValueError):
                return raw
        return raw
    return value


def types_of(attrs: dict) -> set[str]:
    """The prov:type values of a PROV-JSON record (one value or a list)."""
    value = attrs.get("prov:type")
    values = value if isinstance(value, list) else [value] if value is not None else []
    return {str(plain(v)) for v in values}


# ---- verify --------------------------------------------------------------------------------------
@dataclass
class Mismatch:
    path: str
    problem: str  # "missing" | "changed" | "workflow changed" | "workflow missing"
    expected: str | None = None
    actual: str | None = None

    def sentence(self) -> str:
        if self.problem == "missing":
            return f"{self.path}: missing (recorded sha256 {self.expected[:12]}…)"
        if self.problem == "workflow missing":
            return f"{self.path}: the workflow folder is gone (recorded content hash {self.expected[:12]}…)"
        if self.problem == "workflow changed":
            return (f"{self.path}: the workflow folder changed since the run (recorded content hash "
                    f"{self.expected[:12]}…, now {self.actual[:12]}…)")
        return f"{self.path}: content changed (recorded sha256 {self.expected[:12]}…, now {self.actual[:12]}…)"


@dataclass
class VerifyResult:
    checked: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    # files outside the run folder that changed since, for a run that staged its inputs: the run read its
    # own copies, so these say how the data roots moved on, not that the record is untrue
    sources_changed: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def recorded_files(prov: dict) -> list[dict]:
    """Every entity with a recorded sha256: {id, path, sha256, size}."""
    out = []
    for ident, attrs in (prov.get("entity") or {}).items():
        digest = plain(attrs.get("sg:sha256"))
        path = plain(attrs.get("sg:path"))
        if digest and path:
            out.append({"id": ident, "path": path, "sha256": digest, "size": plain(attrs.get("sg:size"))})
    return out


def _resolve(registry_root: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else Path(registry_root) / path


def verify(run_dir: Path, registry_root: Path) -> VerifyResult:
    """Re-hash every file recorded in prov.json and the workflow folder; list what no longer matches."""
    prov = load_prov(run_dir)
    result = VerifyResult()
    staged = (Path(run_dir) / runstore.INPUTS_JSON).is_file()
    inside = os.path.abspath(run_dir) + os.sep
    for rec in recorded_files(prov):
        path = _resolve(registry_root, rec["path"])
        found = result.mismatches if not staged or os.path.abspath(path).startswith(inside) else \
            result.sources_changed
        result.checked += 1
        if not path.is_file():
            found.append(Mismatch(rec["path"], "missing", rec["sha256"]))
            continue
        actual = _sha256(path)
        if actual != rec["sha256"]:
            found.append(Mismatch(rec["path"], "changed", rec["sha256"], actual))
    for attrs in (prov.get("entity") or {}).values():
        content_hash = plain(attrs.get("sg:contentHash"))
        path = plain(attrs.get("sg:path"))
        if not content_hash or not path:
            continue
        folder = _resolve(registry_root, path)
        result.checked += 1
        if not folder.is_dir():
            result.mismatches.append(Mismatch(path, "workflow missing", content_hash))
            continue
        actual = workflow_hash(folder)
        if actual != content_hash:
            result.mismatches.append(Mismatch(path, "workflow changed", content_hash, actual))
    return result


# ---- outputs of two runs -------------------------------------------------------------------------
def declared_outputs(run_dir: Path, manifest_outputs: dict | None = None) -> dict[str, dict]:
    """Declared output name -> {path (run-relative), sha256 or None}, hashed from the files as they are now."""
    run_dir = Path(run_dir)
    outputs: dict[str, str] = {}
    if manifest_outputs:
        outputs = {name: out["path"] for name, out in manifest_outputs.items()}
    else:
        prefix = None
        for rec in runstore.read_run(run_dir).get("outputs") or []:
            # run.json paths are registry-relative (runs/<id>/results/x); keep the part inside the run
            parts = Path(rec["path"]).parts
            prefix = prefix or (parts.index(run_dir.name) + 1 if run_dir.name in parts else 0)
            outputs[rec["name"]] = Path(*parts[prefix:]).as_posix()
    out = {}
    for name, rel in outputs.items():
        path = run_dir / rel
        out[name] = {"path": rel, "sha256": _sha256(path) if path.is_file() else None}
    return out


def output_status(run_a: Path, run_b: Path, manifest_outputs: dict | None = None) -> dict[str, str]:
    """Per declared output: "identical", "differs", or "missing" (absent from either run)."""
    a, b = declared_outputs(run_a, manifest_outputs), declared_outputs(run_b, manifest_outputs)
    status = {}
    for name in sorted(set(a) | set(b)):
        ha, hb = (a.get(name) or {}).get("sha256"), (b.get(name) or {}).get("sha256")
        status[name] = "missing" if not ha or not hb else ("identical" if ha == hb else "differs")
    return status


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a JSON value by path: a.b[0].c."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and value:
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = value
    return out


def leaf_changes(a: Any, b: Any) -> list[dict]:
    """Changed, added and removed leaves between two JSON values, by path."""
    fa, fb = _flatten(a), _flatten(b)
    changes = []
    for path in sorted(set(fa) | set(fb)):
        if path not in fa:
            changes.append({"path": path, "change": "added", "b": fb[path]})
        elif path not in fb:
            changes.append({"path": path, "change": "removed", "a": fa[path]})
        elif fa[path] != fb[path] or type(fa[path]) is not type(fb[path]):
            changes.append({"path": path, "change": "changed", "a": fa[path], "b": fb[path]})
    return changes


def _read_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def diff_runs(run_a: Path, run_b: Path, outputs: tuple[dict | None, dict | None] = (None, None),
              redact: tuple = (None, None)) -> dict:
    """Parameter differences, output hash differences and, for JSON outputs, value differences; for CSV/TSV
    outputs `table` (tablediff.compare_tables: rows added/removed/changed, the first few shown).

    `outputs` are the declared outputs (manifest dicts) of each run's workflow (None: read run.json);
    `redact` holds, per run, a `params -> params` function hiding its `x-sensitive` values.
    """
    inv_a = (runstore.read_json(Path(run_a) / runstore.INVOCATION_JSON).get("invocation") or {})
    inv_b = (runstore.read_json(Path(run_b) / runstore.INVOCATION_JSON).get("invocation") or {})
    pa, pb = inv_a.get("params") or {}, inv_b.get("params") or {}
    pa = redact[0](pa) if redact[0] else pa
    pb = redact[1](pb) if redact[1] else pb
    params = leaf_changes(pa, pb)
    for change in params:
        change["path"] = f"params.{change['path']}"
    a, b = declared_outputs(run_a, outputs[0]), declared_outputs(run_b, outputs[1])
    outputs = []
    for name in sorted(set(a) | set(b)):
        ra, rb = a.get(name) or {}, b.get(name) or {}
        ha, hb = ra.get("sha256"), rb.get("sha256")
        if ha == hb and ha is not None:
            continue
        entry = {"name": name, "path": ra.get("path") or rb.get("path"), "a": ha, "b": hb,
                 "status": "missing" if not ha or not hb else "differs"}
        if ha and hb and str(entry["path"]).endswith(".json"):
            ja, jb = _read_json_file(Path(run_a) / ra["path"]), _read_json_file(Path(run_b) / rb["path"])
            if ja is not None and jb is not None:
                entry["values"] = leaf_changes(ja, jb)
        elif ha and hb and str(entry["path"]).lower().endswith(TABLE_SUFFIXES):
            table = tablediff.compare_tables(Path(run_a) / ra["path"], Path(run_b) / rb["path"])
            if table is not None:
                entry["table"] = table
        outputs.append(entry)
    return {"run_a": Path(run_a).name, "run_b": Path(run_b).name,
            "workflow": [inv_a.get("workflow"), inv_b.get("workflow")],
            "version": [inv_a.get("version"), inv_b.get("version")],
            "params": params, "outputs": outputs,
            "identical_outputs": sorted(n for n in set(a) & set(b)
                                        if a[n]["sha256"] and a[n]["sha256"] == b[n]["sha256"])}


# ---- fork planning -------------------------------------------------------------------------------
def changed_rules(jobs_a: list[dict], jobs_b: list[dict]) -> list[str]:
    """Rules with a job whose params or inputs differ between two DAGs (or that exists in only one).

    Jobs are dicts {rule, output: [...], input: [...], params: {...}}, matched by rule and outputs.
    """
    def index(jobs):
        return {(j["rule"], tuple(sorted(j.get("output") or []))): j for j in jobs}

    ia, ib = index(jobs_a), index(jobs_b)
    changed = set()
    for key in set(ia) | set(ib):
        ja, jb = ia.get(key), ib.get(key)
        if ja is None or jb is None or (json.dumps(ja.get("params"), sort_keys=True, default=str)
              != json.dumps(jb.get("params"), sort_keys=True, default=str)
              or sorted(ja.get("input") or []) != sorted(jb.get("input") or [])):
            changed.add(key[0])
    return sorted(changed)
