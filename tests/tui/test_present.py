"""What the chat shows, as plain strings: masking, run outcomes, failures, line breaks (no app needed)."""

from __future__ import annotations

import json

from chat_pilot import API_NOTE, SECRET
from snakegate.agent.backends import OpenAIBackend
from snakegate.agent.guided import GuidedBackend
from snakegate.runner import RunOutcome
from snakegate.tui import present

SCHEMA = json.loads(API_NOTE["schema.json"])


def test_sensitive_params_are_masked_and_the_others_shown():
    lines = dict(present.param_lines(SCHEMA, {"token": SECRET, "label": "hello"}))
    assert lines == {"token": present.MASK, "label": "hello"}


def test_without_a_schema_every_value_is_masked():
    lines = dict(present.param_lines(None, {"token": SECRET, "label": "hello"}))
    assert set(lines.values()) == {present.MASK}


def test_secrets_in_a_draft_are_found_for_masking_the_transcript():
    assert present.secrets_in(SCHEMA, {"token": SECRET, "label": "hello"}) == [SECRET]


def test_a_failed_run_names_the_rule_its_log_and_the_error(tmp_path):
    run_dir = tmp_path / "runs" / "r1"
    record = {"duration_s": 2.5, "failed_rule": "clean", "failed_log": ["runs/r1/logs/clean.log"],
              "error": "KeyError: 'weight'", "outputs": [{"name": "cleaned", "exists": False}]}
    outcome = RunOutcome(run_id="r1", run_dir=run_dir, status="failed", exit_code=1, record=record, gate=None)
    status, lines = present.outcome_lines(outcome, tmp_path)
    assert status == "failed"
    assert lines[0] == "failed · run r1 · 2.5 s"
    assert "failed rule: clean" in lines and "log: runs/r1/logs/clean.log" in lines
    assert "error: KeyError: 'weight'" in lines
    assert "run folder: runs/r1/" in lines  # nothing was made: point at the run's folder
    assert lines[-1] == "provenance: snakegate prov r1"


def test_a_succeeded_run_points_to_its_outputs_and_provenance(tmp_path):
    run_dir = tmp_path / "runs" / "r2"
    record = {"duration_s": 1.0, "outputs": [{"name": "profile", "exists": True}]}
    outcome = RunOutcome(run_id="r2", run_dir=run_dir, status="succeeded", exit_code=0, record=record, gate=None)
    _, lines = present.outcome_lines(outcome, tmp_path)
    assert "outputs: runs/r2/results/" in lines and "made: profile" in lines
    assert "provenance: snakegate prov r2" in lines


def test_the_header_names_the_guided_dialogue_or_the_model_and_its_server():
    assert present.backend_label(GuidedBackend()) == "guided dialogue (offline)"
    backend = OpenAIBackend("http://localhost:11434/v1", "qwen2.5:7b")
    assert present.backend_label(backend) == "qwen2.5:7b @ http://localhost:11434/v1"


def test_single_newlines_stay_line_breaks_except_in_code():
    text = "first\nsecond\n\n```\ncode\nmore\n```"
    assert present.keep_line_breaks(text) == "first  \nsecond  \n\n```\ncode\nmore\n```"
