"""Small shared pieces of a run's PROV record, used by capture.py and its parts (capture_workflow.py,
capture_gate.py, capture_run.py): the run's IRI, schema.org's action status of a status, the agent types, and
how a run.json list becomes a multi-valued attribute.

Pure functions and constants; nothing is read or written here.
"""

from __future__ import annotations

from snakegate.provenance.document import Many, Q, local

SOFTWARE = Q("prov:SoftwareAgent")
APPLICATION = Q("schema:SoftwareApplication")


def run_iri(record: dict, run_id: str) -> str:
    """A run's IRI: `run:<run_uuid>`, the UUID minted when its run.json was first written (runstore.update_run),
    so that the same config run in two clones by two people is two runs; `run:<run id>` for a run recorded
    before run UUIDs."""
    uuid = record.get("run_uuid") if isinstance(record, dict) else None
    return f"run:{local(uuid)}" if isinstance(uuid, str) and uuid else f"run:{local(run_id)}"


def action_status(status: str | None) -> Q:
    """schema.org's actionStatus of a run or job status: did it succeed (the finer status is `sg:status`)."""
    if status == "succeeded":
        return Q("schema:CompletedActionStatus")
    return Q("schema:ActiveActionStatus") if status == "running" else Q("schema:FailedActionStatus")


def strings(value) -> Many | str | None:
    """A run.json list as a multi-valued attribute (None when empty)."""
    items = [str(v) for v in value] if isinstance(value, list) else ([str(value)] if value else [])
    return None if not items else (items[0] if len(items) == 1 else Many(items))
