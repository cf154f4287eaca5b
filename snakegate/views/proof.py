"""Does the record a view shows prove itself? `show-run` and the report say so plainly at the top when it does
not: an invocation.json edited after the gate shows params that never ran, a run.json edited after the seal a
status or verdict that was never recorded.

The check is snakegate.run.integrity.check_record, the one `snakegate verify`, `rerun` and `fork` use (the
invocation id re-derived, config.yaml, the workflow copy, the staging record and the PROV gate decision held
against it, and the seal). It hashes every file of the run folder (as verify does). A check that crashes is a
record that does not prove itself (fail closed), said with the reason, never a traceback. Only reads.
"""

from __future__ import annotations

from pathlib import Path


def record_check(run_dir: Path, registry_root: Path) -> dict:
    """{proves_itself, problems: [one sentence each], seal: intact|unindexed|unsealed|broken|unchecked}."""
    from snakegate.run.integrity import check_record

    try:
        found = check_record(Path(run_dir), Path(registry_root))
    except Exception as exc:  # noqa: BLE001 - fail closed: a record that cannot be checked does not prove itself
        return {"proves_itself": False, "seal": "unchecked",
                "problems": [f"the record could not be checked ({type(exc).__name__}: {exc})"]}
    return {"proves_itself": found.ok, "problems": found.sentences(),
            "seal": found.seal.state if found.seal is not None else "unchecked"}


def warning(check: dict, run_id: str) -> tuple[str, list[str], str] | None:
    """(headline, what failed, what to do) for a record that does not prove itself; None when it does."""
    if check.get("proves_itself"):
        return None
    return ("this record does not prove itself: the params, status and verdict below may not be what ran",
            list(check.get("problems") or []),
            f"`snakegate verify {run_id}` lists what changed")
