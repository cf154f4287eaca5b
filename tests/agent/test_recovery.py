"""After a failed run or a failing check, the agent proposes a recovery as a fork draft naming the evidence; the
fork runs as a new node linked to the failure (run.json `recovery_of`, PROV `sg:recoveryOf`). The pump-probe
scenario: a background ROI on the signal's wing (verdict contaminated), whose diagnostics suggest another ROI.
Real runs (tests/science_runs.py, the agent conftest's `ran`), the real gate, runner, Snakemake and PROV; the
model is the project's scripted OpenAI-compatible HTTP server.
"""

from __future__ import annotations

import json

import rdflib

from openai_server import call
from prov_iris import run_iri
from science_runs import SUGGESTED
from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.provenance import vocab
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import integrity, runner
from snakegate.provenance.document import ensure_rendering

SG = rdflib.Namespace(vocab.SG)


def conversation(root, backend=None) -> Conversation:
    return Conversation(Registry.load(root), load_settings(root), backend or GuidedBackend(),
                        conversation_id="c-recovery")


def said(events) -> str:
    return "\n".join(e.text for e in events if isinstance(e, AssistantSaid))


def drafts(events) -> list:
    return [e.draft for e in events if isinstance(e, DraftReady)]


def test_after_a_contaminated_background_the_dialogue_proposes_the_suggested_roi_naming_the_evidence(science):
    convo = conversation(science.root)
    convo.ran(science.contaminated.name)
    events = convo.report_runs()
    assert [e.name for e in events if isinstance(e, ActionCalled)] == ["summarize_run", "recover_run"]
    (draft,) = drafts(events)
    assert draft.fork.changes == {"background_roi": SUGGESTED}
    assert draft.fork.recovery_of == {"run": science.contaminated.name, "check": "background_uniform"}
    text = said(events)
    assert "Check `background_uniform` failed: its value is " in text and "(needs >= 0.001)" in text
    assert "The workflow says: The background ROI's p-values are not uniform" in text
    assert "The run suggests `background_roi` = [22, 30, 8, 24] (diagnostics /background/suggested_background_roi)" \
        in text
    assert "recorded as a recovery of its `background_uniform`" in text and "ctrl+r" in text


def test_the_recovery_runs_as_a_new_node_linked_to_the_failing_check_in_run_json_and_prov(science):
    convo = conversation(science.root)
    convo.ran(science.contaminated.name)
    convo.report_runs()
    outcome = convo.execute(convo.approve("Ada Tester"), runner.RunOptions(cores=2))
    assert outcome.status == "succeeded", outcome.record
    record = json.loads((outcome.run_dir / "run.json").read_text())
    assert record["parent_run"] == science.contaminated.name
    assert record["recovery_of"] == {"run": science.contaminated.name, "check": "background_uniform"}
    assert record["fork_changes"] == {"background_roi": SUGGESTED} and record["verdict"]["status"] == "pass"
    assert integrity.check_record(outcome.run_dir, science.root).ok  # sealed with the link in it
    g = rdflib.Graph().parse(ensure_rendering(outcome.run_dir, "prov.ttl"), format="turtle")
    run, parent = run_iri(outcome.run_dir), run_iri(science.contaminated)
    assert (run, SG.recoveryOf, parent) in g and (run, SG.forkOf, parent) in g
    assert str(g.value(run, SG.recoveredCheck)) == "background_uniform"
    terms = rdflib.Graph().parse(vocab.vocabulary_path(), format="turtle")
    for term in (SG.recoveryOf, SG.recoveredCheck):
        assert (term, rdflib.RDFS.label, None) in terms and (term, rdflib.RDFS.comment, None) in terms
    # its own summary, back in the conversation, says what it recovered from and that the check now passes
    events = convo.report_runs()
    assert f"A fork of `{science.contaminated.name}` with `background_roi` = `[22, 30, 8, 24]`, recovering from " \
           "its failing `background_uniform`" in said(events)
    assert "`background_uniform` **pass**" in said(events) and not drafts(events)


def test_after_a_failed_run_the_dialogue_names_the_failing_rule_and_error_and_asks_what_to_change(ran):
    convo = conversation(ran.root)
    convo.ran(ran.failed.name)
    events = convo.report_runs()
    assert not drafts(events) and convo.draft is None  # nothing to propose without a change: it asks
    text = said(events)
    assert "The run failed in rule `note`: ValueError: the column flux is empty" in text
    assert "What should change in `failing-note`?" in text and f"fork {ran.failed.name} name=value" in text


def test_a_follow_up_after_a_failed_run_is_drafted_as_its_recovery(ran):
    convo = conversation(ran.root)
    convo.ran(ran.failed.name)
    convo.report_runs()
    (draft,) = drafts(convo.send("try label=weight instead"))
    assert draft.fork.changes == {"label": "weight"}
    assert draft.fork.recovery_of == {"run": ran.failed.name, "check": "failure"}


def test_recover_run_refuses_a_passing_run_a_check_that_did_not_fail_and_a_recovery_with_no_change(science, ran):
    ctx = ActionContext(Registry.load(science.root), load_settings(science.root))
    passed = call_action(ctx, "recover_run", {"run_id": science.alloys.name})
    assert passed.result["error"]["code"] == "nothing_to_recover" and "fork_run" in passed.result["error"]["hint"]
    other = call_action(ctx, "recover_run", {"run_id": science.contaminated.name, "check": "cv_r2"})
    assert other.result["error"]["code"] == "not_failing"
    assert "background_uniform" in other.result["error"]["message"]
    failed_ctx = ActionContext(Registry.load(ran.root), load_settings(ran.root))
    bare = call_action(failed_ctx, "recover_run", {"run_id": ran.failed.name})
    assert bare.result["error"]["code"] == "no_change" and "`changes`" in bare.result["error"]["hint"]


def test_a_model_proposes_the_recovery_through_recover_run_and_reads_the_evidence(science, openai_server):
    server = openai_server([
        [call("recover_run", {"run_id": science.contaminated.name, "check": "background_uniform"})],
        "The background ROI picks up the signal (KS p far below 0.001); I drafted the suggested ROI: approve it.",
    ])
    convo = conversation(science.root, OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=10))
    convo.ran(science.contaminated.name)
    assert convo.record_runs()  # the summary is in the history: the model reads it with the next message
    events = convo.send("What went wrong, and what should I change?")
    (draft,) = drafts(events)
    assert draft.fork.recovery_of == {"run": science.contaminated.name, "check": "background_uniform"}
    first = server.requests[0]["messages"]
    notes = [m["content"] for m in first if m["role"] == "user" and m["content"].startswith("(snakegate: run")]
    assert len(notes) == 1 and "background_uniform: fail" in notes[0]
    assert "the run suggests background_roi = [22, 30, 8, 24]" in notes[0]
    result = json.loads(server.requests[1]["messages"][-1]["content"])
    assert result["recovery_of"]["check"] == "background_uniform" and result["changes"] == \
        {"background_roi": SUGGESTED}
    assert "The workflow says:" in result["evidence"]
