"""A bounded refinement from the chat (issue 25.3): the model proposes the whole space with propose_refinement,
the person approves it once, the approved points run as forks until the first clean verdict, and nothing the
model proposes afterwards can run under that approval.

The pump-probe scenario: a run whose background ROI sits on the signal's wing (background_uniform fails),
refined over candidate ROIs. The scripted model speaks OpenAI's wire format over real HTTP through the real
OpenAIBackend; the gate, the loop and Snakemake are the real ones.
"""

from __future__ import annotations

import json
import threading

import pytest
from openai_server import DEFAULT_MODEL, call
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

from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.refining import RefinementReady
from snakegate.errors import UserError
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


@pytest.fixture(scope="module")
def pp(tmp_path_factory):
    return contaminated(tmp_path_factory)


def chat(root, server, conversation_id: str) -> Conversation:
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="test-key", timeout=60)
    return Conversation(Registry.load(root), load_settings(root), backend, conversation_id=conversation_id)


def refine_args(parent: str, rois: list, budget: int) -> dict:
    return {"run_id": parent, "vary": {"background_roi": rois}, "budget": budget, "until": "background_uniform"}


def audit(root, conversation_id: str) -> list[dict]:
    path = root / ".snakegate" / "audit" / f"{conversation_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_proposed_refinement_runs_once_approved_stops_at_the_first_clean_verdict_and_a_mid_loop_proposal_never_runs(
        pp, openai_server):
    root, parent = pp
    server = openai_server([[call("propose_refinement", refine_args(parent, [STILL_ON_IT, CLEAR, FAR], 3))],
                            "The whole space is on the panel: approve it once.",
                            [call("propose_refinement", refine_args(parent, [FAR], 1))],
                            "Here is a wider one, for a new approval."])
    convo = chat(root, server, "c-refine-mid-loop")
    events = convo.send("the background is contaminated: try other ROIs until it is clean")
    (ready,) = [e for e in events if isinstance(e, RefinementReady)]
    shown = "\n".join(ready.refinement.lines)  # the whole space, the budget, the stop rule and the check's advice
    assert "1. background_roi=[17, 25, 8, 24]" in shown and "3. background_roi=[24, 32, 8, 24]" in shown
    assert "stop at the first run that passes background_uniform" in shown and "budget: 3 run(s)" in shown
    assert "Move background_roi away from the signal" in shown
    before, known = run_names(root), len(refinement_records(root))

    approval = convo.approve_refinement("Ada Tester")
    between, resume = threading.Event(), threading.Event()

    def on_event(kind, facts):
        if kind == "start" and facts["n"] == 2:  # hold the loop between its first and second point
            between.set()
            resume.wait(300)

    ran: dict = {}
    loop = threading.Thread(target=lambda: ran.update(outcome=convo.run_refinement(approval, on_event=on_event)))
    loop.start()
    try:
        assert between.wait(300), "the first point never finished"
        # mid-loop the model proposes another space: a new offer, which the spent approval cannot run
        events = convo.send("try a wider ROI instead")
        (again,) = [e for e in events if isinstance(e, RefinementReady)]
        assert again.refinement.sha256 != approval.sha256 and convo.refinement is again.refinement
        with pytest.raises(UserError, match="not for the refinement on offer"):
            convo.run_refinement(approval)
    finally:
        resume.set()
        loop.join(300)
    outcome = ran["outcome"]
    assert outcome.state == "reached", outcome.why
    new = run_names(root) - before
    assert sorted(roi_of(root, name) for name in new) == sorted([STILL_ON_IT, CLEAR])  # FAR never ran
    assert [v.check_status for v in outcome.variants] == ["fail", "pass"]
    (record,) = refinement_records(root)[known:]
    assert record["refinement"] == outcome.refinement and record["approved_by"] == "Ada Tester"
    for name in new:  # each run names the conversation, the approver and the one approval
        rec = run_json(root, name)
        assert rec["origin"]["approved_by"] == "Ada Tester" and rec["origin"]["conversation_id"] == "c-refine-mid-loop"
        assert rec["refinement"]["approval_sha256"] == record["approval_sha256"] == approval.sha256
    assert convo.refinement is again.refinement  # the mid-loop proposal is still on offer, unapproved, unrun

    # the table of variants with their verdicts enters the conversation: the model reads it in its next request
    server.add("The second ROI is clean.")
    convo.send("what came out?")
    sent = json.dumps(server.requests[-1]["messages"])
    assert f"refinement {outcome.refinement}: reached" in sent and outcome.variants[-1].run_id in sent
    # the audit log records the proposal, the approval and the refinement's id
    kinds = {line["kind"]: line for line in audit(root, "c-refine-mid-loop")}
    assert kinds["refinement_approval"]["approval_sha256"] == approval.sha256
    assert kinds["refinement"]["refinement"] == outcome.refinement


def test_a_stop_rule_naming_no_check_is_answered_with_the_checks_and_their_status_in_the_run(pp):
    root, parent = pp
    ctx = ActionContext(Registry.load(root), load_settings(root))
    outcome = call_action(ctx, "propose_refinement", {**refine_args(parent, [CLEAR], 1), "until": "clean"})
    assert not outcome.ok and outcome.proposal is None
    (error,) = outcome.result["errors"]
    assert error["code"] == "unknown_check" and error["choices"] == ["background_uniform", "background_mean_p"]
    statuses = {c["name"]: c["in_this_run"] for c in outcome.result["checks"]}
    assert statuses["background_uniform"] == "fail"


def test_a_space_with_a_point_the_gate_refuses_is_not_offered_and_the_errors_name_the_point(pp):
    root, parent = pp
    ctx = ActionContext(Registry.load(root), load_settings(root))
    outcome = call_action(ctx, "propose_refinement", refine_args(parent, [CLEAR, [0, 8, 0]], 2))
    assert not outcome.ok and outcome.proposal is None
    assert outcome.result["errors"] and all(e["path"].startswith("point background_roi=[0, 8, 0]: ")
                                            for e in outcome.result["errors"])
