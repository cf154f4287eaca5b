"""The `assess_run` action: a model attaches its assessment of a run, stored as a model-written annotation.

An assessment is a score on a rubric the model states (what is scored, the scale), with the record's
evidence quoted: each quote must be found in the run's summary (the same text summarize_run gives and a
finished run's note carries: status, verdict and checks, failure, key numbers, first rows), so an
assessment cannot cite what the record does not say. It is appended beside the record, never inside the
sealed run folder (snakegate.provenance.annotations says where and why), labelled model-written with the
model, the backend and the conversation, and the seal it assessed. It is an opinion for people: nothing
reads it to decide what runs. The one action that writes a file, and only that one, outside every run.
"""

from __future__ import annotations

import datetime as _dt
import re

from pydantic import Field

from snakegate.agent import results
from snakegate.agent.actions.base import ActionContext, Args, Refused
from snakegate.agent.actions.results import run_summary
from snakegate.agent.prompt import relative
from snakegate.provenance import annotations, runindex

FULL = 100_000   # the summary's text without the conversation's budget: every line a quote may come from


class AssessRunArgs(Args):
    run_id: str = Field(description="The run assessed: a run id, a unique prefix, or 'latest'.")
    rubric: str = Field(min_length=3, max_length=500,
                        description="What the score measures and how to read it, e.g. 'fitness of the surrogate "
                                    "for choosing the next alloys (1 unusable, 5 ready)'.")
    score: float = Field(description="The score, on the scale scale_min..scale_max.")
    scale_min: float = Field(1, description="The worst score of the scale.")
    scale_max: float = Field(5, description="The best score of the scale.")
    evidence: list[str] = Field(min_length=1, max_length=8,
                                description="Quotes from the run's summary (summarize_run's text) that support the "
                                            "score, each exactly as the summary has it.")
    comment: str = Field("", max_length=1000, description="One or two sentences explaining the score.")


def _plain(text: str) -> str:
    return " ".join(str(text).strip().strip("`\"'“”").split()).lower()


def assess_run(ctx: ActionContext, args: AssessRunArgs):
    summary = run_summary(ctx, args.run_id)
    run = str(summary.get("run_id"))
    if summary.get("status") in ("running", "unreadable"):
        raise Refused("not_assessable", f"run {run} is {summary.get('status')}: there is no finished record to assess",
                      "assess it once it has ended")
    low, high = sorted((args.scale_min, args.scale_max))
    if low == high or not low <= args.score <= high:
        raise Refused("bad_score", f"the score {args.score:g} is not on the scale {args.scale_min:g} to "
                                   f"{args.scale_max:g}", "give a score between scale_min and scale_max, which differ")
    record = _plain(results.text(summary, FULL))
    missing = [q for q in args.evidence if len(_plain(q)) < 3 or _plain(q) not in record]
    if missing:
        raise Refused("evidence_not_in_record", "these quotes are not in the run's record: "
                      + "; ".join(f"“{q[:80]}”" for q in missing),
                      "quote the run's summary exactly (summarize_run gives its text), e.g. a check's line")
    author = ctx.author or {}
    note = {"kind": "assessment", "model": author.get("model"), "backend": author.get("backend"),
            "conversation": author.get("conversation"),
            "written_at": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seal_sha256": runindex.last_seal(ctx.settings.registry_root, run),
            "rubric": " ".join(args.rubric.split()), "score": args.score, "scale": [args.scale_min, args.scale_max],
            "evidence": [re.sub(r"\s+", " ", q).strip() for q in args.evidence],
            "comment": " ".join(args.comment.split())}
    try:
        path = annotations.append(ctx.settings.registry_root, run, note)
    except annotations.AnnotationError as exc:
        raise Refused("not_recorded", f"the assessment of run {run} could not be recorded: {exc}",
                      "tell the researcher")
    shown = {"ok": True, "run_id": run, "recorded": relative(path, ctx.settings.registry_root),
             "label": annotations.label(note),
             "note": "recorded beside the run's record as a model-written assessment; it decides nothing"}
    return shown, f"assessed run {run}: {args.score:g} ({args.scale_min:g}-{args.scale_max:g})", None
