"""Scoring one hidden request of bench_llm.py: was it handled the way the researcher needed? Pure: dicts in, a dict out.

`score(request, seen)` takes one request of bench/llm_requests.yaml (kind fully | vague | mistake, the
expected workflow, the stated values, the mistake's words) and what the chat showed for it (`seen`: the
draft or None, with the faithfulness differences the chat attached; what the assistant said and the other
lines the researcher saw (action lines, failure notices); the workflows described; whether anything ran)
and answers, field by field:

  workflow_right       the draft's workflow, or (no draft) the workflow the conversation asked about
  missing              stated values the draft does not hold (all of them when there is no draft)
  outcome              draft | question (the assistant's last words ask one, or say "Answer with…") |
                       refusal (a mistake answered in words without a draft) | nothing
  explained            a mistake's words appear in what the researcher was shown (said, lines or differences)
  flagged              a draft was marked "differs from the request" (agent/faithful.py)
  silently_unfaithful  a draft missing a stated value, or drafted from a mistaken request, shown as ready
  correct              fully: a ready draft of the right workflow holding every stated value;
                       vague: no draft, a question that names the right workflow;
                       mistake: no ready draft, and the mistake named (refused, or a flagged draft saying so)
                       and in every kind: nothing ran.

It is kept apart from the bench so that its rules have their own tests (tests/agent/test_llm_bench_score.py);
it never talks to a model, reads a file or decides anything for the product.
"""

from __future__ import annotations

import math
from typing import Any


def same(want: Any, got: Any) -> bool:
    """`got` holds the stated `want`: paths equal up to "./", numbers up to rounding, lists of names without
    order (a column selection), other lists in order (an ROI, samples), dicts key by key."""
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(want, str) and isinstance(got, str):
        return want.removeprefix("./") == got.removeprefix("./")
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return False
        if all(isinstance(x, str) for x in want + got):
            return sorted(w.removeprefix("./") for w in want) == sorted(g.removeprefix("./") for g in got)
        return all(same(w, g) for w, g in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(same(want[k], got[k]) for k in want)
    return False


ASKING_LINES = ("Answer ", "Pick one")   # the guided dialogue's way of asking: "Answer with a number or a value"


def _asks(said: list[str]) -> bool:
    """The assistant's last words ask the researcher something."""
    return bool(said) and ("?" in said[-1] or any(line.startswith(ASKING_LINES) for line in said[-1].splitlines()))


def score(request: dict, seen: dict) -> dict:
    """One request's verdict; `seen` = {"draft": {"workflow", "params", "differences"} | None,
    "said": [the assistant's texts, in order], "shown": [other lines the researcher saw], "described": [workflow
    ids], "ran": bool}."""
    kind, wf = request["kind"], request["workflow"]
    draft, said = seen.get("draft"), list(seen.get("said") or [])
    # "Several workflows match “<the request>”" repeats the mistake back; only the rest can explain it
    texts = [t.replace(request["text"], "") for t in said + list(seen.get("shown") or [])]
    values = request.get("values") or {}
    params = (draft or {}).get("params") or {}
    differences = list((draft or {}).get("differences") or [])
    missing = sorted(k for k, v in values.items() if draft is None or k not in params or not same(v, params[k]))
    if draft is not None:
        workflow_right = draft.get("workflow") == wf
        outcome = "draft"
    else:
        workflow_right = wf in (seen.get("described") or []) or any(wf in t for t in said)
        outcome = "question" if _asks(said) else "refusal" if kind == "mistake" and said else "nothing"
    flagged = draft is not None and bool(differences)
    words = [str(w) for w in request.get("mistake") or []]
    explained = bool(words) and any(w in t for w in words for t in texts + differences)
    # a draft is unfaithful when it lost a stated value, or when the request held a mistake (whatever the
    # draft did with the wrong thing, it is not what was asked)
    unfaithful = draft is not None and bool(missing or kind == "mistake")
    silently = unfaithful and not flagged
    ran = bool(seen.get("ran"))
    if kind == "fully":
        correct = draft is not None and workflow_right and not missing and not flagged
    elif kind == "vague":
        correct = draft is None and outcome == "question" and workflow_right
    else:
        correct = explained and (draft is None or flagged)
    return {"workflow_right": workflow_right, "missing": missing, "outcome": outcome, "explained": explained,
            "flagged": flagged, "silently_unfaithful": silently, "ran": ran, "correct": correct and not ran}


def summary(rows: list[dict]) -> dict:
    """Totals over scored rows (each row has `kind` and `score`): correct overall and per kind, silently
    unfaithful drafts, runs, and the model requests and seconds to the drafts that were written."""
    by_kind: dict[str, list[int]] = {}
    for row in rows:
        got = by_kind.setdefault(row["kind"], [0, 0])
        got[0] += row["score"]["correct"]
        got[1] += 1
    drafted = [r for r in rows if r.get("requests_to_draft") is not None]
    return {"correct": sum(r["score"]["correct"] for r in rows), "of": len(rows),
            "by_kind": {k: f"{c}/{n}" for k, (c, n) in sorted(by_kind.items())},
            "silently_unfaithful": sum(r["score"]["silently_unfaithful"] for r in rows),
            "flagged": sum(r["score"]["flagged"] for r in rows),
            "ran": sum(r["score"]["ran"] for r in rows),
            "drafts": len(drafted),
            "requests_to_draft": sorted(r["requests_to_draft"] for r in drafted),
            "seconds_to_draft": sorted(r["seconds_to_draft"] for r in drafted if r.get("seconds_to_draft") is not None)}
