"""Reading runs back from their records: verify a run's files, compare two runs, plan a fork.

Everything here works from the run folders alone (prov.json, invocation.json,
run.json and the files); nothing is written. `verify()` re-hashes every file
prov.json recorded and the workflow folder; `diff_runs()` lists parameter,
output-hash and JSON-value differences, and for CSV/TSV outputs the rows and cells that changed
(tablediff.py), two plans' runs step by step; `output_status()` says per declared
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


def path_of(attrs: dict) -> Any:
    """A file's (or workflow folder's) recorded path: `prov:location`, or `sg:path` in records made before
    snakegate wrote standard terms."""
    return plain(attrs.get("prov:location")) or plain(attrs.get("sg:path"))


def sha256_of(attrs: dict) -> Any:
    """A file's recorded sha256: `schema:sha256`, or `sg:sha256` in older records."""
    return plain(attrs.get("schema:sha256")) or plain(attrs.get("sg:sha256"))


def size_of(attrs: dict) -> Any:
    """A file's recorded size in bytes: `schema:contentSize`, or `sg:size` in older records."""
    value = attrs.get("schema:contentSize")
    return plain(value) if value is not None else plain(attrs.get("sg:size"))


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
        digest, path = sha256_of(attrs), path_of(attrs)
        if digest and path and not str(path).startswith("<"):  # a path left out of the record is not checked
            out.append({"id": ident, "path": path, "sha256": digest, "size": size_of(attrs)})
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
        path = path_of(attrs)
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
    """Declared output name -> {path (run-relative), sha256 or None}, hashed from the files as they are now (a
    regular file inside the run folder only)."""
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
    inside = run_dir.resolve()
    for name, rel in outputs.items():
        path = run_dir / rel
        # a record edited to name a file outside its run folder (`../../etc/passwd`) names nothing to hash
        mine = inside in path.resolve().parents
        out[name] = {"path": rel, "sha256": _sha256(path) if mine and path.is_file() else None}
    return out


def output_status(run_a: Path, run_b: Path, manifest_outputs: dict | None = None) -> dict[str, str]:
    """Per declared output: "identical", "differs", or "missing" (absent from either run)."""
    a, b = declared_outputs(run_a, manifest_outputs), declared_outputs(run_b, manifest_outputs)
    status = {}
    for name in sorted(set(a) | set(b)):
        ha, hb = (a.get(name) or {}).get("sha256"), (b.get(name) or {}).get("sha256")
        status[name] = "missing" if not ha or not hb else ("identical" if ha == hb else "differs")
    return status


def _flatten(value: Any, prefix: str = "", scalar_lists: bool = False) -> dict[str, Any]:
    """Leaves of a JSON value by path: a.b[0].c; with `scalar_lists`, a list of plain values is one leaf."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and value:
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k), scalar_lists))
    elif isinstance(value, list) and value and not (scalar_lists and not any(isinstance(v, (dict, list))
                                                                            for v in value)):
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]", scalar_lists))
    else:
        out[prefix] = value
    return out


def leaf_changes(a: Any, b: Any, scalar_lists: bool = False) -> list[dict]:
    """Changed, added and removed leaves between two JSON values, by path; with `scalar_lists` (params: a
    list of columns is one choice) a changed list of plain values is one change, not one per item."""
    fa, fb = _flatten(a, scalar_lists=scalar_lists), _flatten(b, scalar_lists=scalar_lists)
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
    `redact` holds, per run, a `params -> params` function hiding its `x-sensitive` values (for a plan's run:
    `{step: params} -> {step: params}`). Two plans' runs are compared step by step (`steps`, see _diff_plans).
    """
    inv_a = (runstore.read_json(Path(run_a) / runstore.INVOCATION_JSON).get("invocation") or {})
    inv_b = (runstore.read_json(Path(run_b) / runstore.INVOCATION_JSON).get("invocation") or {})
    if is_plan_invocation(inv_a) and is_plan_invocation(inv_b):
        return _diff_plans(Path(run_a), Path(run_b), inv_a, inv_b, redact)
    pa, pb = _params_of(inv_a), _params_of(inv_b)
    pa = redact[0](pa) if redact[0] else pa
    pb = redact[1](pb) if redact[1] else pb
    params = leaf_changes(pa, pb, scalar_lists=True)
    for change in params:
        change["path"] = f"params.{change['path']}"
    a, b = declared_outputs(run_a, outputs[0]), declared_outputs(run_b, outputs[1])
    changed, identical = _output_changes(Path(run_a), Path(run_b), a, b)
    return {"run_a": Path(run_a).name, "run_b": Path(run_b).name,
            "workflow": [_workflow_of(inv_a), _workflow_of(inv_b)],
            "version": [inv_a.get("version"), inv_b.get("version")],
            "params": params, "outputs": changed, "identical_outputs": identical}


def is_plan_invocation(invocation: Any) -> bool:
    """invocation.json's `invocation` of a plan: `{plan, steps: {name: step invocation}}`."""
    return isinstance(invocation, dict) and isinstance(invocation.get("steps"), dict) and "workflow" not in invocation


def _params_of(invocation: dict) -> dict:
    if is_plan_invocation(invocation):  # a plan beside one workflow: its params under each step
        return {"steps": {n: {"params": (s or {}).get("params") or {}} for n, s in invocation["steps"].items()
                          if isinstance(s, dict)}}
    return invocation.get("params") or {}


def _workflow_of(invocation: dict) -> str | None:
    if is_plan_invocation(invocation):
        return f"plan {invocation['plan']}" if isinstance(invocation.get("plan"), str) else "plan"
    return invocation.get("workflow")


def _output_changes(run_a: Path, run_b: Path, a: dict, b: dict) -> tuple[list[dict], list[str]]:
    """(the outputs that differ, with their JSON value or table changes; the names of the identical ones)."""
    outputs = []
    for name in sorted(set(a) | set(b)):
        ra, rb = a.get(name) or {}, b.get(name) or {}
        ha, hb = ra.get("sha256"), rb.get("sha256")
        if ha == hb and ha is not None:
            continue
        entry = {"name": name, "path": ra.get("path") or rb.get("path"), "a": ha, "b": hb,
                 "status": "missing" if not ha or not hb else "differs"}
        if ha and hb and str(entry["path"]).endswith(".json"):
            ja, jb = _read_json_file(run_a / ra["path"]), _read_json_file(run_b / rb["path"])
            if ja is not None and jb is not None:
                entry["values"] = leaf_changes(ja, jb)
        elif ha and hb and str(entry["path"]).lower().endswith(TABLE_SUFFIXES):
            table = tablediff.compare_tables(run_a / ra["path"], run_b / rb["path"])
            if table is not None:
                entry["table"] = table
        outputs.append(entry)
    return outputs, sorted(n for n in set(a) & set(b) if a[n]["sha256"] and a[n]["sha256"] == b[n]["sha256"])


def step_order(run_dir: Path, invocation: dict) -> list[str]:
    """A plan run's steps in the order the run took them: as run.json lists their outputs, then by name."""
    names = [str(n) for n in sorted(invocation.get("steps") or {}, key=str)]
    listed = [o.get("step") for o in runstore.read_run(run_dir).get("outputs") or [] if isinstance(o, dict)]
    first = [n for n in dict.fromkeys(listed) if n in names]
    return first + [n for n in names if n not in first]


def _diff_plans(run_a: Path, run_b: Path, inv_a: dict, inv_b: dict, redact: tuple) -> dict:
    """Two plans' runs step by step: per step (matched by name) its workflow and version, its changed params
    (`params.x`), its outputs that differ and those that are identical; the same changes flat as well
    (`steps.<step>.params.x`, outputs as `<step>.<output>`), as one workflow's diff lists them."""
    steps_a, steps_b = inv_a["steps"], inv_b["steps"]
    pa = {n: (s or {}).get("params") or {} for n, s in steps_a.items() if isinstance(s, dict)}
    pb = {n: (s or {}).get("params") or {} for n, s in steps_b.items() if isinstance(s, dict)}
    pa = redact[0](pa) if redact[0] else pa
    pb = redact[1](pb) if redact[1] else pb
    oa, ob = declared_outputs(run_a), declared_outputs(run_b)
    order = step_order(run_a, inv_a)
    order += [n for n in step_order(run_b, inv_b) if n not in order]
    steps, flat_params, flat_outputs, flat_identical = [], [], [], []
    for name in order:
        sa, sb = steps_a.get(name), steps_b.get(name)
        sa, sb = sa if isinstance(sa, dict) else None, sb if isinstance(sb, dict) else None
        params = leaf_changes(pa.get(name) or {}, pb.get(name) or {}, scalar_lists=True) if sa and sb else []
        for change in params:
            change["path"] = f"params.{change['path']}"
        mine = {side: {k.split(".", 1)[1]: v for k, v in outs.items() if k.split(".", 1)[0] == name and "." in k}
                for side, outs in (("a", oa), ("b", ob))}
        changed, identical = _output_changes(run_a, run_b, mine["a"], mine["b"])
        workflows = [(sa or {}).get("workflow"), (sb or {}).get("workflow")]
        versions = [(sa or {}).get("version"), (sb or {}).get("version")]
        status = "added" if sa is None else "removed" if sb is None else \
            "changed" if params or changed or workflows[0] != workflows[1] or versions[0] != versions[1] \
            else "identical"
        steps.append({"name": name, "status": status, "workflow": workflows, "version": versions,
                      "params": params, "outputs": changed, "identical_outputs": identical})
        flat_params += [{**c, "path": f"steps.{name}.{c['path']}"} for c in params]
        flat_outputs += [{**o, "name": f"{name}.{o['name']}"} for o in changed]
        flat_identical += [f"{name}.{n}" for n in identical]
    return {"run_a": run_a.name, "run_b": run_b.name, "kind": "plan",
            "plan": [inv_a.get("plan"), inv_b.get("plan")],
            "workflow": [_workflow_of(inv_a), _workflow_of(inv_b)], "version": [None, None],
            "steps": steps, "params": flat_params, "outputs": flat_outputs, "identical_outputs": flat_identical}


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
