"""A finished run, summarised for the conversation: what a model (or the guided dialogue) reads once a run ends.

`summarize(run_dir, view, secrets)` reads one run folder and returns plain data: the run's status and
duration, what it was forked from (and whether as a recovery), its verdict (run.json `verdict`: overall and
each check with its value, failing checks first; a failing check with what failing means (`says`) and the
params to look at), the failing rule and the real error of a failed run (run.json `failure`), the key numbers
of its declared JSON outputs (the ones its checks read first, then the ones that changed against a fork's
parent, then the shallowest), the numbers that changed against a fork's parent (`changed_from_parent`, the
parent's outputs read and verified as the run's own are), the first rows of its declared tables (the columns the workflow declares, in its order), what the
run itself suggests for a failing check's params (a key `suggested_<param>` in the check's own JSON output,
e.g. pump-probe's `/background/suggested_background_roi` for `background_roi`), and its params.
Its rendering as text (`text`, `note`, `NOTE_RE`, ...) lives in agent/summary_text.py and is importable
from here too.

Reads only inside the run folder (and a fork's parent's folder beside it, for its outputs): run.json, invocation.json, config.yaml (for the values to mask), the
run's own copy of its workflow (outputs, columns, checks, which params are sensitive) and its declared
outputs, each opened as a regular file without following a symbolic link, bounded, and used only when its
bytes are the ones its job recorded (runs/<id>/hashes/). Every x-sensitive value of the run, and every
value the conversation knows to be secret, is `<redacted>`; secret-shaped text (a provider's key, a
password phrase) in an error or a table cell is too; paths are shown as the model may see them
(agent/actions/limits.PathView). Never raises on a damaged run: what cannot be read is said, not guessed.
Writes nothing, runs nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from snakegate.agent.redact import PLACEHOLDER, redact_params, scrub, secret_strings
from snakegate.agent.secretscan import find_secrets
from snakegate.agent import summary_text
from snakegate.agent.summary_text import (  # noqa: F401 - NOTE_RE, BUDGET, ...: read as results.* too
    BUDGET, KEY_NUMBERS, LOG_LINES, NOTE, NOTE_RE, SHORTENED, TABLE_ROWS, measured, per_item, shortened, value_text,
)
from snakegate.provenance import runstore, secrets as record_secrets

TABLE_COLUMNS = 12
CELL_CHARS = 32
TEXT_CHARS = 400          # an error message, a check's `says`
READ_CAP = 16 << 20       # an output bigger than this is not read (its hash cannot be checked cheaply)
HEAD_BYTES = 256 << 10    # a table's first rows come from its first bytes
SUGGESTED = "suggested_"  # the key prefix by which a run's own JSON output suggests a value for a param
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


# ---- reading the run folder ----------------------------------------------------------------------
class _Unread(Exception):
    """An output that cannot be used; the message says why (never what it holds)."""


def _verified(path: Path, sha256: str | None, name: str) -> bytes:
    """The first HEAD_BYTES..READ_CAP of a regular file whose sha256 is the one its job recorded."""
    if sha256 is None:
        raise _Unread(f"`{name}` has no record of the job that wrote it")
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise _Unread(f"`{name}` was not written") from None
    except OSError as exc:
        raise _Unread(f"`{name}` cannot be read ({exc.strerror or exc}; a symbolic link is not followed)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unread(f"`{name}` is not a regular file")
        if info.st_size > READ_CAP:
            raise _Unread(f"`{name}` is larger than {READ_CAP >> 20} MiB (not read)")
        digest, chunks, size = hashlib.sha256(), [], 0
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > READ_CAP:
                raise _Unread(f"`{name}` is larger than {READ_CAP >> 20} MiB (not read)")
            digest.update(chunk)
            chunks.append(chunk)
    finally:
        os.close(fd)
    if digest.hexdigest() != sha256:
        raise _Unread(f"`{name}` is not the file its job recorded (its sha256 differs)")
    return b"".join(chunks)


def _inside(run_dir: Path, rel: str) -> Path | None:
    """`rel` under the run folder, or None when it would leave it (`..`, an absolute path)."""
    path = Path(os.path.normpath(run_dir / rel))
    return path if str(path).startswith(str(run_dir) + os.sep) else None


def _units(run_dir: Path, record: dict, invocation: dict) -> list[tuple[str, str, Any, dict]]:
    """(name prefix, folder in the run, the workflow copy, gated params) for a run, or each step of a plan."""
    from snakegate.run import pinning

    if record.get("kind") == "plan" or "steps" in invocation:
        from snakegate.plan.compose import STEPS_DIR

        out = []
        for name, step in (invocation.get("steps") or {}).items():
            step = step if isinstance(step, dict) else {}
            try:
                wf = pinning.load_copy(run_dir / STEPS_DIR / name, str(step.get("workflow")))
            except pinning.PinError:
                wf = None
            out.append((f"{name}.", f"{STEPS_DIR}/{name}/", wf, step.get("params") or {}))
        return out
    try:
        wf = pinning.load_copy(run_dir, str(invocation.get("workflow") or record.get("workflow")))
    except pinning.PinError:
        wf = None
    return [("", "", wf, invocation.get("params") or {})]


def _run_secrets(run_dir: Path, units: list) -> list[str]:
    """The text of every x-sensitive value the run got (config.yaml holds them plain; invocation.json may too).
    A unit whose contract cannot be read counts every value as sensitive (fail closed)."""
    from snakegate.provenance.runrecords import run_config_params
    from snakegate.views.params import plan_config_params

    plain = plan_config_params(run_dir) if len(units) > 1 or units[0][0] else {"": run_config_params(run_dir) or {}}
    values: list = []
    for prefix, _, wf, params in units:
        given = plain.get(prefix.rstrip(".")) or {}
        if wf is None:
            values += [*given.values(), *params.values()]
            continue
        values += [*record_secrets.sensitive_values(wf.schema, given).values(),
                   *record_secrets.sensitive_values(wf.schema, params).values()]
    return secret_strings(values)


def _map_strings(value: Any, fn) -> Any:
    """`value` (JSON-able) with `fn` applied to every string in it but the keys."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def _hide_hash(text: str) -> str:
    return PLACEHOLDER if record_secrets.is_keyed_hash(text) else text


def _shown_params(units: list) -> dict:
    """The gated params, sensitive values (and keyed hashes read back) as the placeholder; a plan's by step."""
    out = {}
    for prefix, _, wf, params in units:
        shown = _map_strings(redact_params(wf.schema, params), _hide_hash) if wf is not None else \
            {k: PLACEHOLDER for k in params}
        if prefix:
            out[prefix.rstrip(".")] = shown
        else:
            out.update(shown)
    return out


def _shown_changes(units: list, changes: dict) -> dict:
    """A fork's changes, a sensitive param's (by the contract of its workflow, or its step's in a plan; every
    one when the contract cannot be read) as the placeholder."""
    from snakegate.views.params import sensitive_name

    schemas = {prefix: (wf.schema if wf is not None else None) for prefix, _, wf, _ in units}
    out = {}
    for name, value in changes.items():
        prefix = next((p for p in schemas if p and name.startswith(p)), "")
        hidden = sensitive_name(schemas.get(prefix), name[len(prefix):]) or record_secrets.is_keyed_hash(value)
        out[name] = PLACEHOLDER if hidden else value
    return out


# ---- the parts of a summary ----------------------------------------------------------------------
def _cut(text: Any, limit: int = TEXT_CHARS, clean=None) -> str:
    """One line of at most `limit` characters; `clean` (masking, path hiding) goes first, so a secret or a
    path is never cut into a piece that no longer looks like one."""
    text = " ".join((clean(str(text)) if clean else str(text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdict(record: dict, clean) -> dict | None:
    verdict = record.get("verdict")
    if not isinstance(verdict, dict) or verdict.get("status") not in ("pass", "fail", "unknown"):
        return None
    checks = []
    for c in verdict.get("checks") or []:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            continue
        entry = {"name": c["name"], "status": c.get("status"), "value": c.get("value"), "test": c.get("test"),
                 "threshold": c.get("threshold")}
        items = [v for v in c.get("values") or [] if isinstance(v, dict)]
        if len(items) > 1:  # a check over every item of a list param: each item's value
            entry["values"] = [{"at": v.get("at"), "value": v.get("value"), "status": v.get("status")}
                               for v in items[:8]]
        if c.get("status") != "pass":
            entry["says"] = _cut(c.get("says") or "", clean=clean)
            entry["params"] = [p for p in c.get("params") or [] if isinstance(p, str)]
            entry["output"] = c.get("output")
        if c.get("reason"):
            entry["reason"] = _cut(c["reason"], clean=clean)
        checks.append(entry)
    order = {"fail": 0, "unknown": 1}  # the checks that need a look first, each group as recorded
    out = {"status": verdict["status"], "checks": sorted(checks, key=lambda c: order.get(c.get("status"), 2))}
    if verdict.get("reason"):
        out["reason"] = _cut(verdict["reason"], clean=clean)
    return out


def _failure(record: dict, run_dir: Path, clean) -> dict | None:
    """The failing rule, the real error and its log's last lines, from run.json (a log only inside the run)."""
    failure = record.get("failure") if isinstance(record.get("failure"), dict) else {}
    rule = failure.get("rule") or record.get("failed_rule")
    message = failure.get("message") or record.get("error")
    if not rule and not message:
        return None
    out = {"rule": rule, "error": _cut(message or "(no message)", 2 * TEXT_CHARS, clean)}
    if failure.get("exception"):
        out["exception"] = failure["exception"]
    tail = failure.get("log_tail") if isinstance(failure.get("log_tail"), list) else None
    log = failure.get("log")
    log = log[0] if isinstance(log, list) and log else log
    if not tail and isinstance(log, str) and log:
        path = _inside(run_dir, log.split(f"{run_dir.name}/", 1)[-1])
        if path is not None:
            try:
                data, _ = runstore.read_tail(path, 16 << 10)
                tail = data.decode("utf-8", errors="replace").splitlines()[1:]
            except (OSError, runstore.RecordUnreadable):
                tail = None
    if tail:
        out["log_tail"] = [_cut(line, 200, clean) for line in tail if str(line).strip()][-LOG_LINES:]
    return out


def _number_leaves(document: Any, first: Iterable[str] = ()) -> dict:
    """The numbers of a JSON output that matter, at most KEY_NUMBERS: the keys in `first` (what the verdict's
    checks read, then what changed against a fork's parent), then the others, shallowest first."""
    from snakegate.views.facts import numeric_leaves

    leaves = numeric_leaves(document)
    keys = list(dict.fromkeys([k for k in first if k in leaves] + list(leaves)))[:KEY_NUMBERS]
    return {k: leaves[k] for k in keys} | ({"…": f"{len(leaves) - KEY_NUMBERS} more"}
                                           if len(leaves) > KEY_NUMBERS else {})


def _table_head(data: bytes, delimiter: str, declared: list[str] | None, clean) -> dict:
    text = data[:HEAD_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    more = len(data) > HEAD_BYTES
    if more:
        text = text[:text.rfind("\n") + 1]
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) if any(c.strip() for c in r)]
    except csv.Error as exc:
        raise _Unread(f"is not a readable table ({exc})") from None
    if not rows:
        raise _Unread("has no header row")
    header, body = rows[0], rows[1:]
    # the workflow's declared columns, in its order (extra columns a script added are left out)
    columns = [c for c in declared if c in header] if declared else list(header)
    columns = (columns or list(header))[:TABLE_COLUMNS]
    at = [header.index(c) for c in columns]
    shown = [[_cut(row[i], CELL_CHARS, clean) if i < len(row) else "" for i in at] for row in body[:TABLE_ROWS]]
    total = len(body) if not more else sum(1 for line in data.splitlines()[1:] if line.strip())
    return {"columns": columns, "rows": shown, "total_rows": total,
            "more_columns": max(0, len(header) - len(columns))}


def _find_key(document: Any, key: str, where: str = "", depth: int = 0) -> tuple[str, Any] | None:
    """(JSON pointer, value) of the first `key` in a document, shallowest first (bounded depth)."""
    if depth > 6 or not isinstance(document, dict):
        return None
    if key in document:
        return f"{where}/{key}", document[key]
    for k, v in document.items():
        found = _find_key(v, key, f"{where}/{k}", depth + 1)
        if found is not None:
            return found
    return None


def _parents_copies(run_dir: Path, record: dict) -> set[str]:
    """A fork that did not succeed: the outputs still as copied from its parent (its own job may never have
    run), which are not this run's results."""
    from snakegate.run import reuse

    seeded = record.get("seeded")
    if record.get("status") == "succeeded" or not isinstance(seeded, list):
        return set()
    return {entry["path"] for entry in reuse.still_reused(run_dir, seeded)}


def _parent_folder(run_dir: Path, record: dict) -> Path | None:
    """The run folder of a fork's parent beside it (a real folder, named as a run id), else None."""
    parent = record.get("parent_run")
    if not isinstance(parent, str) or not runstore.is_safe_run_id(parent):
        return None
    folder = run_dir.parent / parent
    return folder if folder.is_dir() and not folder.is_symlink() else None


def _parents_document(parent: Path | None, rel: str) -> Any:
    """The parent's same JSON output, read as this run's are (verified against its job's record); None when
    there is no parent or it cannot be read (then nothing is said to have changed)."""
    path = _inside(parent, rel) if parent is not None else None
    if path is None:
        return None
    job = runstore.read_output_record(parent, rel) or {}
    try:
        return json.loads(_verified(path, job.get("sha256") if isinstance(job.get("sha256"), str) else None, rel))
    except Exception:  # noqa: BLE001 - a damaged or hostile parent output: no comparison, never a crash
        return None


def _outputs(run_dir: Path, units: list, verdict: dict | None, record: dict, clean) -> tuple[dict, dict, list, dict,
                                                                                            list]:
    """(numbers, tables, suggestions, unreadable, changed against a fork's parent) from the run's declared
    outputs."""
    from snakegate.contract import artifacts
    from snakegate.contract.outputs import declared_columns, placeholders
    from snakegate.views.facts import changed_leaves
    from snakegate.views.verdict import measured_keys

    numbers, tables, unread, documents, changed = {}, {}, {}, {}, []
    copies = _parents_copies(run_dir, record)
    parent = _parent_folder(run_dir, record)
    measured = measured_keys(record)
    for prefix, folder, wf, params in units:
        if wf is None:
            continue
        for name, decl in wf.manifest.outputs.items():
            kind = decl.type
            if placeholders(decl.path) or not (kind == "json" or artifacts.is_table(kind)):
                continue
            rel = folder + decl.path
            path = _inside(run_dir, rel)
            if path is None or rel in copies:
                continue
            if not path.exists() and not path.is_symlink():
                continue  # not made (a failed run, an output made only for some params): nothing to say
            job = runstore.read_output_record(run_dir, rel) or {}
            try:
                data = _verified(path, job.get("sha256") if isinstance(job.get("sha256"), str) else None,
                                 prefix + name)
                if kind == "json":
                    try:
                        document = json.loads(data)
                    except (ValueError, RecursionError):
                        raise _Unread("is not valid JSON") from None
                    documents[prefix + name] = document
                    before = _parents_document(parent, rel)
                    moved = changed_leaves(prefix + name, document, before) if before is not None else []
                    changed += moved
                    first = [key for _check, output, key in measured if output in ("", prefix + name)]
                    leaves = _number_leaves(document, first + [c["key"] for c in moved])
                    if leaves:
                        numbers[prefix + name] = leaves
                else:
                    declared = declared_columns(decl, params, lambda _param: None)
                    tables[prefix + name] = _table_head(data, artifacts.delimiter(kind), declared, clean)
            except _Unread as exc:
                unread[prefix + name] = str(exc).replace(f"`{prefix + name}` ", "")
            except Exception as exc:  # noqa: BLE001 - a hostile output is said, never a crash
                unread[prefix + name] = f"cannot be read ({type(exc).__name__})"
    suggestions = []
    for check in (verdict or {}).get("checks") or []:
        if check.get("status") != "fail":
            continue
        document = documents.get(str(check.get("output")))
        for param in check.get("params") or []:
            found = _find_key(document, SUGGESTED + param.rsplit(".", 1)[-1])
            if found is not None and found[1] is not None:
                suggestions.append({"check": check["name"], "param": param, "value": found[1],
                                    "from": f"{check.get('output')} {found[0]}"})
    return numbers, tables, suggestions, unread, changed


def _masked_text(text: str) -> str:
    """Secret-shaped text (a provider's key, "password is X") as the placeholder: an error or a cell may print
    one that no contract marks sensitive."""
    for suspect in find_secrets(text):
        text = text.replace(suspect.value, PLACEHOLDER)
    return text


# ---- the summary ---------------------------------------------------------------------------------
def summarize(run_dir: Path, view, known_secrets: Iterable[str] = ()) -> dict:
    """The run's summary as plain data (see the module's docstring), masked and with paths hidden by `view`
    (an agent.actions.limits.PathView: passed in, so this module sits below the actions that use it)."""
    run_dir = Path(os.path.abspath(run_dir))
    record, problem = runstore.load_run(run_dir)
    if not record:
        return {"run_id": run_dir.name, "status": "unreadable",
                "unreadable": _cut(problem or "run.json is missing", clean=view.hide)}
    invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
    units = _units(run_dir, record, invocation)
    hidden = secret_strings([*_run_secrets(run_dir, units), *known_secrets])

    def clean(text: str) -> str:
        return view.hide(_masked_text(scrub(text, hidden)))

    status = str(record.get("status") or "unknown")
    out: dict[str, Any] = {"run_id": record.get("run_id") or run_dir.name, "workflow": record.get("workflow"),
                           "version": record.get("version"), "status": status,
                           "duration_s": record.get("duration_s")}
    if record.get("parent_run"):
        out["fork_of"] = record["parent_run"]
        out["changes"] = _shown_changes(units, dict(record.get("fork_changes") or {}))
    if isinstance(record.get("recovery_of"), dict):
        out["recovery_of"] = record["recovery_of"]
    verdict = _verdict(record, clean)
    if verdict is not None:
        out["verdict"] = verdict
    if status not in ("succeeded", "running"):
        failure = _failure(record, run_dir, clean)
        if failure is not None:
            out["failure"] = failure
    if record.get("cancelled_by"):
        out["cancelled_by"] = record["cancelled_by"]
    for key in ("missing_outputs", "input_changed"):
        if record.get(key):
            out[key] = [x.get("path") or x.get("param") if isinstance(x, dict) else x for x in record[key]][:10]
    numbers, tables, suggestions, unread, changed = _outputs(run_dir, units, verdict, record, clean)
    changed = sorted(changed, key=lambda c: c["key"].count(".") + c["key"].count("["))[:KEY_NUMBERS]
    for key, value in (("numbers", numbers), ("changed_from_parent", changed), ("tables", tables),
                       ("suggestions", suggestions), ("unreadable_outputs", unread)):
        if value:
            out[key] = value
    out["params"] = _shown_params(units)
    # every string (and key) once more, whole: what was not cut is masked and its paths hidden here
    return view.hide(_map_strings(scrub(out, hidden), _masked_text))


# the rendering (summary_text.py), read as results.text and results.note by the doors that summarise a run
text, note = summary_text.text, summary_text.note
