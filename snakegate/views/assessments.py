"""A run's model-written assessments (`assess_run`) as `show-run` and the report show them: each labelled
model-written, with its rubric, score, quoted evidence and comment, and whether it judged the record as it
is now (the seal it names is the run's last seal) or an earlier state of it.

Reads the annotations beside the record (snakegate.provenance.annotations) and the run index's seal; writes
nothing. An assessment is an opinion shown to people: no view treats it as part of the record, and nothing
reads it to decide what runs.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.provenance import annotations, runindex

MAX_SHOWN = 10  # the latest ones; a run assessed more often says how many are not shown


def of_run(registry_root: Path, run_id: str) -> list[dict]:
    """The run's assessments, latest last: {label, rubric, score, scale, evidence, comment, written_at,
    model, backend, current}; `current` is False when the record was sealed again after the assessment."""
    seal = runindex.last_seal(registry_root, run_id)
    shown = []
    for note in annotations.read(registry_root, run_id)[-MAX_SHOWN:]:
        if note.get("kind") != "assessment":
            continue
        evidence = note.get("evidence") if isinstance(note.get("evidence"), list) else []
        shown.append({"label": note.get("label") or annotations.label(note), "rubric": note.get("rubric"),
                      "score": note.get("score"), "scale": note.get("scale"),
                      "evidence": [str(q) for q in evidence][:8], "comment": note.get("comment") or "",
                      "written_at": note.get("written_at"), "model": note.get("model"),
                      "backend": note.get("backend"),
                      "current": seal is None or note.get("seal_sha256") == seal})
    return shown


def lines(assessed: list[dict]) -> list[str]:
    """The plain-text lines of `show-run`'s section (empty when there is none)."""
    out = []
    for a in assessed:
        out.append(f"  {a['label']}" + ("" if a["current"] else " [about an earlier state of this record]"))
        for quote in a["evidence"]:
            out.append(f"    quotes: “{quote}”")
        if a["comment"]:
            out.append(f"    says: {a['comment']}")
    return (["assessments (model-written; not part of the record)"] + out) if out else []
