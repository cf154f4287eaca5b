"""The front end's proof, handed to the Snakemake it starts: one digest of exactly what `snakegate run` gated and
wrote into the run folder, so that the parse-time gate (snakegate.run.prepare) accepts that proof instead of
proving the same invocation a second time (its own sandboxed preflight, the data roots walked again).

The digest covers, in one canonical JSON text:
- the explicit run config (runs/<run_id>/config.yaml) as the front end built it; the parse-time gate digests the
  `config` Snakemake loaded, so a config changed after the gate (a param, the run id, the invocation id, a key
  Snakemake added from another file) never matches;
- the invocation record (invocation.json) and the staging record's entries (inputs.json) as the front end wrote
  them; the parse-time gate digests what it reads there.

Why someone who can write to the run folder or the data roots can neither forge nor replay it: the digest
travels in Snakemake's environment (HANDOVER_ENV, set by the front end for its child only), never in a file;
another run's files name another run id, so they never match this run's digest; and any difference sends the
parse-time gate back to the full proof, which refuses what the front end would have refused. The inputs are not
in it: their staged copies were hashed as they were written, against the gated digests, and are checked before
each job (snakegate.run.guard) and at the end of the run.

Pure: plain Python (hashlib, hmac, json); it reads and writes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from snakegate.run.handshake import HANDOVER_ENV  # noqa: F401 - handover.HANDOVER_ENV names the variable


def digest(config: Any, record: Any, entries: Any) -> str | None:
    """sha256 over the run config, the invocation record and the staging entries; None when they are not plain
    JSON data (then there is nothing to hand over, and the parse-time gate proves the invocation in full)."""
    try:
        text = json.dumps({"config": config, "invocation": record, "inputs": entries or {}}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def matches(handed: str | None, config: Any, record: Any, entries: Any) -> bool:
    """Is what the parse-time gate has (Snakemake's config, the records it read) exactly what the front end
    gated and handed over as `handed`? False without a handed digest."""
    if not handed:
        return False
    mine = digest(config, record, entries)
    return mine is not None and hmac.compare_digest(mine, handed)
