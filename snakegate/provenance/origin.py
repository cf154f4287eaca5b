"""Where a run came from when the chat proposed it: the model, its backend, and who approved it.

The agent passes `extra_record={"origin": origin_fields(...)}` to the runner,
which puts it in run.json before Snakemake starts, or calls `record_origin()`
to write runs/<id>/origin.json while the run folder exists and before the
record is written; `capture()` reads either and
puts the model and the approver into the run's PROV record: the invocation is
attributed to the model, and an approval activity associated with the person
informs the run. A run without origin.json came from a terminal or a config
file and has no such agents.

    from snakegate.provenance.origin import origin_fields, record_origin
    fields = dict(model="qwen2.5:7b", proposed_by_backend="openai-compatible", approved_by="Jane Doe",
                  approved_at="2026-01-31T10:00:00Z", conversation_id="c-42")
    runner.execute(..., extra_record={"origin": origin_fields(**fields)})   # or:
    record_origin(run_dir, **fields)
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from snakegate.provenance import runstore

FIELDS = ("model", "proposed_by_backend", "approved_by", "approved_at", "conversation_id", "answered_by",
          "transcript_sha256")


class OriginError(ValueError):
    """An origin record that cannot be written as given; the message names the field."""


def _check_time(value: str) -> str:
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise OriginError(f"approved_at must be an ISO 8601 time such as 2026-01-31T10:00:00Z (got {value!r})")
    if parsed.tzinfo is None:
        raise OriginError(f"approved_at must carry a time zone, e.g. a trailing Z for UTC (got {value!r})")
    return value


def origin_fields(*, model: str, proposed_by_backend: str, approved_by: str, approved_at: str,
                  conversation_id: str | None = None, answered_by: str | None = None,
                  transcript_sha256: str | None = None) -> dict:
    """The checked origin record; pass it to the runner as `extra_record={"origin": origin_fields(...)}`.

    `model` is the model that was asked for; `answered_by` the name the server reported in its answers
    (they differ when a server maps an alias); `transcript_sha256` the hash of the chat's audit log up to
    the approval."""
    for name, value in (("model", model), ("proposed_by_backend", proposed_by_backend),
                        ("approved_by", approved_by), ("approved_at", approved_at)):
        if not isinstance(value, str) or not value.strip():
            raise OriginError(f"{name} must be a non-empty string (got {value!r})")
    for name, value in (("conversation_id", conversation_id), ("answered_by", answered_by),
                        ("transcript_sha256", transcript_sha256)):
        if value is not None and not isinstance(value, str):
            raise OriginError(f"{name} must be a string or None (got {value!r})")
    out = {"model": model, "proposed_by_backend": proposed_by_backend, "approved_by": approved_by,
           "approved_at": _check_time(approved_at), "conversation_id": conversation_id}
    out.update({k: v for k, v in (("answered_by", answered_by), ("transcript_sha256", transcript_sha256)) if v})
    return out


def record_origin(run_dir: str | Path, *, model: str, proposed_by_backend: str, approved_by: str,
                  approved_at: str, conversation_id: str | None = None) -> Path:
    """Write runs/<id>/origin.json (write-then-rename) and return its path.

    Provenance is written when Snakemake finishes; call this before that, or start the run with
    `extra_record={"origin": origin_fields(...)}` instead (the usual way through the runner)."""
    data = origin_fields(model=model, proposed_by_backend=proposed_by_backend, approved_by=approved_by,
                         approved_at=approved_at, conversation_id=conversation_id)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / runstore.ORIGIN_JSON
    runstore.write_json_atomic(path, data)
    return path


def read_origin(run_dir: str | Path) -> dict | None:
    """The origin record, or None when the run did not come from the chat (or the file is unreadable).

    origin.json wins; a run started with `extra_record={"origin": {...same fields...}}` (the runner
    merges that into run.json before Snakemake starts) is read from run.json instead."""
    data = runstore.read_json(Path(run_dir) / runstore.ORIGIN_JSON)
    if not data.get("model"):
        embedded = runstore.read_run(run_dir).get("origin")
        data = embedded if isinstance(embedded, dict) else {}
    if not data.get("model") or not data.get("approved_by") or not data.get("proposed_by_backend"):
        return None
    return {k: data.get(k) for k in FIELDS}


def approval_time(origin: dict) -> _dt.datetime | None:
    try:
        return _dt.datetime.fromisoformat(str(origin.get("approved_at")).replace("Z", "+00:00"))
    except ValueError:
        return None
