"""What a run folder says, as plain data: the failure facts, the key numbers of its JSON outputs, its
diagnostics, the first rows of its tables, who proposed and approved it, the SHAs that pin it, its jobs'
timeline. (How its params are shown, masked, is snakegate.views.params.)

One definition for every reader: `snakegate show-run` and `snakegate report` (CLI), the agent's
`explain_run` (which the chat's run panel and history read) and the chat's history view. Reads only the
run folder (and a failure's log named relative to the registry root), and never a file whole: logs from
their end, JSON and tables from their start, each up to a cap, and only regular files (a FIFO or a device
named like an output is never waited on). Writes nothing, runs nothing.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snakegate.provenance import compare, runstore

from snakegate.views.params import MASK, sensitive_name, value_text

LOG_TAIL_LINES = 15
LINE_CHARS = 300
KEY_NUMBERS = 20          # numeric leaves kept per JSON output
DIAGNOSTICS_CHARS = 3000
TABLE_ROWS = 5
TABLE_COLUMNS = 12
CELL_CHARS = 40
LOG_TAIL_BYTES = 64 * 1024          # a log's tail is read from its last bytes only
JSON_READ_BYTES = 8 * 1024 * 1024   # a JSON output bigger than this gives no key numbers (it is not parsed)
TABLE_READ_BYTES = 1024 * 1024      # a table's preview and row count come from its first bytes only


class UnreadableRun(Exception):
    """A run folder whose run.json cannot be read; the message says why and that other runs are fine."""


def current_record(settings, run_dir: Path) -> tuple[dict, str | None]:
    """(run.json's record, a note for the reader or None), with a stale `running` record completed first
    (snakegate.run.stale: a run whose processes are gone becomes `interrupted`). A damaged prov.json is a
    note; a damaged or missing run.json raises UnreadableRun."""
    from snakegate.run import stale

    record, problem = runstore.load_run(run_dir)
    if not record:
        raise UnreadableRun(f"the record of run {Path(run_dir).name} cannot be read: {problem} (folder "
                            f"{run_dir}); the other runs are not affected")
    record = stale.refresh(settings, run_dir, record)
    record.setdefault("run_id", Path(run_dir).name)
    return record, problem or stale.record_note(run_dir, record)


# ---- text ----------------------------------------------------------------------------------------
def cut_line(text: Any, limit: int = LINE_CHARS) -> str:
    """One line, cut in the middle when long: an error's start says where, its end says what happened."""
    text = str(text)
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + " … " + text[-(limit - head - 3):]


def duration_text(seconds: Any, compact: bool = False) -> str:
    """'13.8 s', '1 min 06 s', '2 h 05 min' ('13.8s', '1m06s', '2h05m' when compact); '–' when unknown."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "-" if compact else "–"
    if seconds < 60:
        return f"{seconds:.1f}{'' if compact else ' '}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if compact:
        return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def left_in_queue(record: dict) -> tuple[str, str] | None:
    """For a Slurm run nobody finished (interrupted): the commands that list and cancel its jobs, which no one
    has cancelled, since the head that would have is gone; None for any other run (run.json
    `execution.slurm_job_name`, snakegate.run.cluster)."""
    execution = record.get("execution") if isinstance(record.get("execution"), dict) else {}
    name = execution.get("slurm_job_name")
    if record.get("status") != "interrupted" or not isinstance(name, str) or not name:
        return None
    return f"squeue --name={shlex.quote(name)}", f"scancel --name={shlex.quote(name)}"


def log_tail(path: Path, n: int = LOG_TAIL_LINES) -> list[str]:
    """The last `n` non-blank lines of a text file (each cut to one readable line), from its last
    LOG_TAIL_BYTES; [] when it is not a readable regular file."""
    try:
        data, cut = runstore.read_tail(path, LOG_TAIL_BYTES, follow_symlinks=True)
    except (OSError, runstore.RecordUnreadable):
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if cut and lines:
        lines = lines[1:]  # the first line read may be the end of a longer one
    return [cut_line(line) for line in lines if line.strip()][-n:]


# ---- failure, key numbers, diagnostics -----------------------------------------------------------
def failure_facts(record: dict, run_dir: Path, root: Path) -> dict:
    """The failing rule, the real error and its log's tail, from run.json's `failure` (older records:
    `failed_rule`/`failed_log`/`error`); the log is read only inside the run folder or the registry."""
    failure = record.get("failure") if isinstance(record.get("failure"), dict) else {}
    logs = failure.get("log") or record.get("failed_log") or []
    logs = [logs] if isinstance(logs, str) else [x for x in logs if isinstance(x, str)] if isinstance(logs, list) \
        else []
    out = {"rule": failure.get("rule") or record.get("failed_rule"),
           "error": cut_line(failure.get("message") or record.get("error") or "", 2 * LINE_CHARS) or None,
           "exception": failure.get("exception"), "log": logs[0] if logs else None}
    tail = failure.get("log_tail") if isinstance(failure.get("log_tail"), list) else None
    if not tail and logs:
        for base in (run_dir, root):
            candidate = (Path(base) / logs[0]).resolve()
            if candidate.is_file() and (Path(run_dir).resolve() in candidate.parents
                                        or Path(root).resolve() in candidate.parents):
                tail = log_tail(candidate)
                break
    if not tail:
        tail = log_tail(Path(run_dir) / runstore.SNAKEMAKE_LOG)
    out["log_tail"] = [cut_line(line) for line in (tail or [])][-LOG_TAIL_LINES:]
    return {k: v for k, v in out.items() if v not in (None, [], "")}


def numeric_leaves(value: Any) -> dict[str, float]:
    """Numeric leaves of a JSON value by path (a.b[0].c), the shallowest first: a result's headline
    numbers sit at the top."""
    leaves = compare._flatten(value)  # noqa: SLF001 - the same leaf paths `snakegate diff` shows
    found = [(k, v) for k, v in leaves.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return dict(sorted(found, key=lambda kv: kv[0].count(".") + kv[0].count("[")))


def inside_run(run_dir: Path, recorded: str) -> Path:
    """A run.json output path (registry-relative, runs/<id>/results/x) as a path in the run folder."""
    return Path(run_dir) / str(recorded).split(f"{Path(run_dir).name}/", 1)[-1]


def read_json_head(path: Path, cap: int = JSON_READ_BYTES) -> Any:
    """The JSON value of a regular file of at most `cap` bytes; None when it is bigger, not JSON or unreadable."""
    try:
        text, more = runstore.read_head(path, cap, follow_symlinks=True)
        return None if more else json.loads(text)
    except (OSError, ValueError, RecursionError, runstore.RecordUnreadable):
        return None


def json_numbers(path: Path, limit: int = KEY_NUMBERS, first: list[str] | tuple[str, ...] = ()) -> dict | None:
    """The first `limit` numeric leaves of a JSON file (of at most JSON_READ_BYTES), the keys in `first` before
    the others, plus {"…": "N more"}; None when unreadable."""
    data = read_json_head(path)
    if data is None:
        return None
    numbers = numeric_leaves(data)
    keys = list(dict.fromkeys([k for k in first if k in numbers] + list(numbers)))[:limit]
    return {k: numbers[k] for k in keys} | ({"…": f"{len(numbers) - limit} more"} if len(numbers) > limit else {})


def key_numbers(record: dict, run_dir: Path) -> dict:
    """Output name -> key numbers, for every JSON output run.json lists: the numbers its verdict's checks read
    first (failing checks first), then the shallowest."""
    from snakegate.views.verdict import measured_keys

    measured = measured_keys(record)
    out = {}
    for o in record.get("outputs") or []:
        rel = str(o.get("path") or "")
        if not rel.endswith(".json"):
            continue
        name = o.get("name") or rel
        numbers = json_numbers(inside_run(run_dir, rel),
                               first=[key for _check, output, key in measured if output in ("", name)])
        if numbers is not None:
            out[name] = numbers
    return out


def changed_leaves(output: str, document: Any, parents: Any) -> list[dict]:
    """[{output, key, parent, value}] of the numbers of one JSON output that differ from the parent's same output
    (a number only one of them has is None in the other)."""
    now, before = numeric_leaves(document), numeric_leaves(parents)
    keys = list(now) + [k for k in before if k not in now]
    return [{"output": output, "key": k, "parent": before.get(k), "value": now.get(k)}
            for k in keys if now.get(k) != before.get(k)]


def changed_numbers(record: dict, run_dir: Path, limit: int = KEY_NUMBERS) -> list[dict]:
    """A fork's key numbers that differ from its parent's: [{output, key, parent, value}] over the JSON outputs
    run.json lists, the shallowest keys first (a value only one run has is None in the other); [] for a run
    that is no fork, or whose parent is not a run folder beside it."""
    parent = record.get("parent_run")
    if not isinstance(parent, str) or not runstore.is_safe_run_id(parent):
        return []
    parent_dir = Path(run_dir).parent / parent
    if not parent_dir.is_dir():
        return []
    out: list[dict] = []
    for o in record.get("outputs") or []:
        rel = str(o.get("path") or "") if isinstance(o, dict) else ""
        if not rel.endswith(".json"):
            continue
        inside = rel.split(f"{Path(run_dir).name}/", 1)[-1]
        mine, theirs = (read_json_head(base / inside) for base in (Path(run_dir), parent_dir))
        if mine is None or theirs is None:
            continue
        out += changed_leaves(o.get("name") or rel, mine, theirs)
    return sorted(out, key=lambda c: c["key"].count(".") + c["key"].count("["))[:limit]


def diagnostics(run_dir: Path) -> dict:
    """Any diagnostics.json the workflow wrote (the first three), whole when short, else its numbers."""
    out = {}
    for path in sorted(Path(run_dir).rglob("diagnostics.json"))[:3]:
        rel = path.relative_to(run_dir).as_posix()
        if rel.startswith("workflow/"):
            continue  # the immutable copy of the workflow folder, not something the run wrote
        try:
            head, more = runstore.read_head(path, DIAGNOSTICS_CHARS * 4)
        except (OSError, runstore.RecordUnreadable) as exc:
            out[rel] = str(exc)
            continue
        text = head.decode("utf-8", errors="replace")
        if not more and len(text) <= DIAGNOSTICS_CHARS:
            try:
                out[rel] = json.loads(text)
            except ValueError:
                out[rel] = cut_line(text)
            continue
        numbers = json_numbers(path)
        out[rel] = {"key_numbers": numbers} if numbers is not None else cut_line(text)
    return out


# ---- tables --------------------------------------------------------------------------------------
def table_head(path: Path, rows: int = TABLE_ROWS, columns: int = TABLE_COLUMNS) -> dict | None:
    """{columns, rows, total_rows, rows_counted_fully, more_columns} of a CSV/TSV file (delimiter from the
    suffix), from its first TABLE_READ_BYTES only (the row count then says "at least"), cells cut to
    CELL_CHARS; None when it cannot be read as a table."""
    path = Path(path)
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    try:
        head, more = runstore.read_head(path, TABLE_READ_BYTES, follow_symlinks=True)
    except (OSError, runstore.RecordUnreadable):
        return None
    text = head.decode("utf-8", errors="replace")
    if more:
        text = text[:text.rfind("\n") + 1]  # the last line read may be cut short
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return None
        body, total = [], 0
        for row in reader:
            total += 1
            if len(body) < rows:
                body.append([cut_line(c, CELL_CHARS) for c in row[:columns]])
    except csv.Error:
        return None
    return {"columns": [cut_line(c, CELL_CHARS) for c in header[:columns]], "rows": body, "total_rows": total,
            "rows_counted_fully": not more, "more_columns": max(0, len(header) - columns)}


# ---- who and what pinned it ----------------------------------------------------------------------
# the PROV attributes that pin what ran, by local name (the vocabulary's prefix may change)
PIN_LABELS = (("gitCommit", "registry commit"), ("gitTree", "workflow git tree"),
              ("contentHash", "workflow content hash"))


def pins(prov: dict) -> list[tuple[str, str]]:
    """(label, SHA) of the registry commit, the workflow's git tree and content hash, from a PROV record."""
    found: dict[str, str] = {}
    for attrs in (prov.get("entity") or {}).values():
        if not isinstance(attrs, dict):
            continue
        for key, value in attrs.items():
            local = str(key).rsplit(":", 1)[-1]
            for name, label in PIN_LABELS:
                if local == name and label not in found and compare.plain(value):
                    found[label] = str(compare.plain(value))
    return [(label, found[label]) for _, label in PIN_LABELS if label in found]


def registry_dirty(prov: dict) -> bool | None:
    """Whether the registry had uncommitted changes when the run was recorded (None: not recorded)."""
    for attrs in (prov.get("entity") or {}).values():
        if isinstance(attrs, dict) and "sg:gitDirty" in attrs:
            value = compare.plain(attrs["sg:gitDirty"])
            return value in (True, "true", "True")
    return None


@dataclass(frozen=True)
class Origin:
    """Which door a run came through and who proposed and approved it."""

    door: str                     # "chat", "MCP", "snakegate run", "snakegate rerun", "snakegate fork", "plain snakemake"
    proposed_by: str | None       # the model (chat) or MCP client; None for the command line
    approved_by: str | None       # the person who approved it in the chat/MCP client
    approved_at: str | None
    operator: str | None = None   # the person the PROV record names as running it

    @property
    def source(self) -> str:
        """One line for `show-run`: 'chat (qwen2.5:7b via openai-compatible, approved by Jane Doe)'."""
        if self.proposed_by and self.approved_by:
            return f"{self.door} (proposed by {self.proposed_by}, approved by {self.approved_by})"
        return self.door


def origin_of(record: dict, run_dir: Path, prov: dict | None = None) -> Origin:
    from snakegate.provenance.origin import read_origin
    from snakegate.provenance.rocrate.from_prov import person

    origin = read_origin(run_dir)
    operator = None
    if prov:
        who = person(prov)
        operator = (f"{who['name']} <{who['email']}>" if who.get("email") else who["name"]) if who else None
    if origin:
        if origin.get("proposed_by_backend") == "mcp":
            return Origin("MCP", f"MCP client {origin.get('model')}", origin.get("approved_by"),
                          origin.get("approved_at"), operator)
        model = origin.get("model")
        answered = origin.get("answered_by")
        if answered and answered != model:
            model = f"{model} (answered by {answered})"
        return Origin("chat", f"{model} via {origin.get('proposed_by_backend')}", origin.get("approved_by"),
                      origin.get("approved_at"), operator)
    source = record.get("source")
    if source in ("snakemake", "job"):
        door = "plain snakemake"
    elif record.get("rerun_of"):
        door = "snakegate rerun"
    elif record.get("parent_run"):
        door = "snakegate fork"
    else:
        door = str(source or "unknown")
    return Origin(door, None, None, None, operator)


def parent_of(record: dict, schema: dict | None) -> dict | None:
    """{kind: fork|rerun, run_id, changes: [(param, shown value)]} when the run was made from another run;
    a changed sensitive param (or, without a contract, any param) shows as MASK."""
    if record.get("parent_run"):
        changes = [(name, MASK if sensitive_name(schema, name) else value_text(value))
                   for name, value in (record.get("fork_changes") or {}).items()]
        return {"kind": "fork", "run_id": record["parent_run"], "changes": changes}
    if record.get("rerun_of"):
        return {"kind": "rerun", "run_id": record["rerun_of"], "changes": []}
    return None


def refinement_of(record: dict) -> str | None:
    """'refinement <id>, point k of n' for a run a bounded refinement started (run.json `refinement`, which
    snakegate.refine.loop writes); None for any other run."""
    found = record.get("refinement")
    if not isinstance(found, dict) or not isinstance(found.get("id"), str):
        return None
    point, points = found.get("point"), found.get("points")
    where = f", point {point} of {points}" if all(isinstance(n, int) and not isinstance(n, bool)
                                                  for n in (point, points)) else ""
    return f"refinement {cut_line(found['id'], 80)}{where}"


# ---- jobs ----------------------------------------------------------------------------------------
def timeline(prov: dict) -> list[dict]:
    """The run's jobs from its PROV record, by start time: {rule, wildcards, status, start, end,
    offset_s, duration_s, error}; offsets count from the first job's start."""
    from snakegate.provenance.rocrate.from_prov import jobs

    rows = []
    for job in jobs(prov):
        start, end = runstore.parse_time(job.start), runstore.parse_time(job.end)
        rows.append({"rule": job.rule, "wildcards": _wildcards_text(job.wildcards), "status": job.status,
                     "start": job.start, "end": job.end, "_start": start, "_end": end, "error": job.error})
    known = [r["_start"] for r in rows if r["_start"]]
    origin = min(known) if known else None
    for r in rows:
        s, e = r.pop("_start"), r.pop("_end")
        r["offset_s"] = round((s - origin).total_seconds(), 3) if s and origin else None
        r["duration_s"] = round((e - s).total_seconds(), 3) if s and e else None
    return sorted(rows, key=lambda r: (r["offset_s"] is None, r["offset_s"] or 0, r["rule"], r["wildcards"]))


def _wildcards_text(raw: Any) -> str:
    if not raw:
        return ""
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return str(raw)
    if isinstance(data, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(data.items()))
    return str(data)


def relative_to(path: Path, root: Path) -> str:
    """`path` relative to `root` when inside it, else as given."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return str(path)


def workflow_of(registry, run_dir: Path):
    """The workflow a run executed: its run folder's copy; for a run made before copies, the registry's
    workflow of that id; None when neither is there."""
    from snakegate.run.pinning import run_workflow

    copy = run_workflow(run_dir)
    if copy is not None:
        return copy
    wf_id = runstore.read_run(run_dir).get("workflow") or \
        (runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation") or {}).get("workflow")
    return registry.get(wf_id) if isinstance(wf_id, str) and registry is not None else None
