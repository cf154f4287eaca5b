"""A bounded refinement over MCP (issue 25.3): propose_refinement gates the whole space, execute_refinement shows
it to the person in ONE elicitation and runs it only when they confirm; the audit log records the approval and
the refinement's id. The SDK's own client against a real `snakegate mcp` process; real Snakemake runs.

The pump-probe scenario (tests/refine_registry.py): a contaminated background ROI, refined over candidate ROIs,
stopped at the first clean verdict.
"""

from __future__ import annotations

import pytest
from mcp_session import CLIENT, McpSession, accept, audit_lines, decline
from refine_registry import (
    CLEAR,
    FAR,
    STILL_ON_IT,
    contaminated,
    refinement_records,
    roi_of,
    run_json,
    run_names,
)


@pytest.fixture(scope="module")
def pp(tmp_path_factory):
    return contaminated(tmp_path_factory)


def proposed(s: McpSession, parent: str, rois: list, budget: int) -> dict:
    r = s.call("propose_refinement", {"run_id": parent, "vary": {"background_roi": rois}, "budget": budget,
                                      "until": "background_uniform"})
    out = s.result(r)
    assert not r.is_error and out["ok"], out
    return out


def test_one_confirmation_showing_the_whole_space_runs_the_refinement_to_its_first_clean_verdict(pp):
    root, parent = pp
    before, known = run_names(root), len(refinement_records(root))
    with McpSession.stdio(root, answer=accept("Grace Hopper")) as s:
        offer = proposed(s, parent, [STILL_ON_IT, CLEAR, FAR], 3)
        assert [p["values"]["background_roi"] for p in offer["refinement"]["points"]] == [STILL_ON_IT, CLEAR, FAR]
        assert run_names(root) == before  # proposing runs nothing

        r = s.call("execute_refinement", {"approval_sha256": offer["approval_sha256"]})
        out = s.result(r)
        assert not r.is_error and out["state"] == "reached" and out["ok"], out
        # the person was asked once, and shown the whole space: every point, the rule, the check's advice
        (asked,) = s.elicitations
        for line in ("1. background_roi=[17, 25, 8, 24]", "3. background_roi=[24, 32, 8, 24]",
                     "stop at the first run that passes background_uniform", "Move background_roi away"):
            assert line in asked.message
        assert asked.requested_schema["properties"]["run"]["type"] == "boolean"
        assert [row["check"]["status"] for row in out["runs"]] == ["fail", "pass"]
        assert any("point 2/3" in (message or "") for _, _, message in s.progress)

        again = s.call("execute_refinement", {"approval_sha256": offer["approval_sha256"]})
        assert again.is_error and s.result(again)["error"]["code"] == "refinement_used"
        assert len(s.elicitations) == 1  # one confirmation, one loop: not asked again

    new = run_names(root) - before
    assert sorted(roi_of(root, name) for name in new) == sorted([STILL_ON_IT, CLEAR])  # FAR never ran
    (record,) = refinement_records(root)[known:]
    assert record["refinement"] == out["refinement"] and record["approved_by"] == "Grace Hopper"
    for name in new:
        origin = run_json(root, name)["origin"]
        assert origin["approved_by"] == "Grace Hopper" and origin["proposed_by_backend"] == "mcp"
        assert origin["model"] == f"{CLIENT.name} {CLIENT.version}"
    # the audit log records the approval and the refinement's id
    (line,) = [entry for entry in audit_lines(root) if entry.get("name") == "execute_refinement"
               and "refinement" in entry]  # (on 2026-07-28 connections the question went out on a line before)
    assert line["elicitation"] == "accept" and line["approved_by"] == "Grace Hopper"
    assert line["approval_sha256"] == offer["approval_sha256"] == record["approval_sha256"]
    assert line["refinement"] == out["refinement"] and line["state"] == "reached"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_declined_confirmation_runs_nothing(pp, mode):
    root, parent = pp
    before, known = run_names(root), len(refinement_records(root))
    with McpSession.stdio(root, answer=decline(), mode=mode) as s:
        offer = proposed(s, parent, [CLEAR], 1)
        r = s.call("execute_refinement", {"approval_sha256": offer["approval_sha256"]})
        assert r.is_error and s.result(r)["error"]["code"] == "declined"
        assert len(s.elicitations) == 1
    assert run_names(root) == before and len(refinement_records(root)) == known
    declined = [entry for entry in audit_lines(root) if entry.get("name") == "execute_refinement"][-1]
    assert declined["outcome"] == "refused" and declined["elicitation"] == "decline"


def test_a_refinement_no_proposal_gated_cannot_be_run(pp):
    root, _ = pp
    before = run_names(root)
    with McpSession.stdio(root, answer=accept()) as s:
        r = s.call("execute_refinement", {"approval_sha256": "0" * 64})
        assert r.is_error and s.result(r)["error"]["code"] == "unknown_refinement"
        assert not s.elicitations
    assert run_names(root) == before
