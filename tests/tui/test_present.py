"""What the chat shows, as plain strings: masking, why nothing can be approved, run outcomes with the real
failure, the result summary, history rows, a diff (no app needed)."""

from __future__ import annotations

import json
from pathlib import Path

from chat_pilot import API_NOTE, SECRET
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.agent.redact import PLACEHOLDER
from snakegate.tui import present, present_runs

SCHEMA = json.loads(API_NOTE["schema.json"])
ROOT = Path("/registry")


def test_sensitive_params_are_masked_and_the_others_shown():
    lines = dict(present.param_lines(SCHEMA, {"token": SECRET, "label": "hello"}))
    assert lines == {"token": present.MASK, "label": "hello"}


def test_without_a_schema_every_value_is_masked():
    lines = dict(present.param_lines(None, {"token": SECRET, "label": "hello"}))
    assert set(lines.values()) == {present.MASK}


def test_the_placeholder_is_the_agents():
    assert present.PLACEHOLDER == PLACEHOLDER


def test_secrets_in_a_draft_are_found_for_masking_the_transcript():
    assert present.secrets_in(SCHEMA, {"token": SECRET, "label": "hello"}) == [SECRET]


def test_ctrl_r_with_nothing_to_approve_says_why():
    def why(**state):
        return present.not_approvable(**{"loading": False, "thinking": False, "running": False,
                                         "withdrawn": None, **state})

    assert "registry is still loading" in why(loading=True)
    assert "run is going" in why(running=True) and "ctrl+c" in why(running=True)
    assert "still answering" in why(thinking=True)
    assert "withdrawn (you started over)" in why(withdrawn="you started over")
    assert "no draft has passed the gate" in why()


def test_a_failed_run_names_the_rule_the_real_error_and_the_log_tail():
    explained = {"failure": {"rule": "clean", "exception": "KeyError", "error": "'weight'", "log": "logs/clean.log",
                             "log_tail": [f"line {i}" for i in range(10)] + ["KeyError: 'weight'"]}}
    lines = present_runs.outcome_lines("failed", "r1", {"duration_s": 2.5}, explained, ROOT / "runs" / "r1", ROOT)
    assert lines[:2] == ["✗ failed · 2.5 s", "run r1"]
    assert "failed rule: clean" in lines and "error: KeyError: 'weight'" in lines and "log: logs/clean.log" in lines
    tail = [line for line in lines if line.startswith("│ ")]
    assert len(tail) == present_runs.LOG_TAIL_LINES and tail[-1] == "│ KeyError: 'weight'"
    assert lines[-1] == "runs/r1/"


def test_an_error_that_already_names_its_exception_is_not_prefixed_twice():
    assert present_runs.failure_text({"exception": "ValueError", "error": "ValueError: bad"}) == "ValueError: bad"
    assert present_runs.failure_text({}) == "no message recorded"


def test_a_cancelled_run_names_the_signal_and_the_jobs_that_were_running():
    explained = {"cancelled_by": "SIGINT", "running_jobs": ["note"]}
    lines = present_runs.outcome_lines("cancelled", "r3", {"duration_s": 4.0}, explained, ROOT / "runs" / "r3", ROOT)
    assert "cancelled by SIGINT while note ran; the record says how far it got" in lines


def test_the_result_summary_has_key_numbers_plots_and_outputs():
    record = {"duration_s": 10.6, "outputs": [
        {"name": "cleaned", "path": "runs/r2/results/cleaned.csv", "exists": True},
        {"name": "profile", "path": "runs/r2/results/profile.json", "exists": True},
        {"name": "plot", "path": "runs/r2/results/profile.png", "exists": True}]}
    explained = {"key_numbers": {"profile": {"rows_in": 40, "rows_out": 32, "…": "80 more"}}}
    text = present_runs.result_summary("succeeded", "r2", record, explained, ROOT / "runs" / "r2", ROOT)
    assert text.startswith("**Run r2 succeeded** in 10.6 s.")
    assert "Key numbers: `rows_in = 40`, `rows_out = 32`\n" in text  # the "… more" marker is not a number
    assert "Plots: `runs/r2/results/profile.png`" in text
    assert "`runs/r2/results/cleaned.csv`, `runs/r2/results/profile.json`" in text
    assert "snakegate prov r2" in text


def test_a_history_row_reads_the_same_whatever_the_clock():
    row = present_runs.history_row({"run_id": "20261122T160920Z-d8a69fe7", "workflow": "tabular-profile",
                                    "status": "failed", "duration_s": 75, "started": "2026-11-22T16:09:20.123Z"})
    assert row == ("20261122T160920Z-d8a69fe7", "tabular-profile", "✗ failed", "1 min 15 s", "2026-11-22 16:09Z")


def test_the_history_filter_needs_every_word():
    record = {"run_id": "r1", "workflow": "tabular-profile", "status": "failed", "started": "2026-11-22T16:09Z"}
    assert present_runs.matches(record, "tabular FAILED")
    assert present_runs.matches(record, "2026-11-22")
    assert not present_runs.matches(record, "tabular succeeded")


def test_a_diff_shows_the_changed_param_first():
    diff = {"run_a": "A", "run_b": "B", "workflow": ["w", "w"], "version": ["1", "1"],
            "params": [{"path": "params.missing_strategy", "change": "changed", "a": "remove", "b": "fill_mean"}],
            "outputs": [{"name": "profile", "status": "differs",
                         "values": [{"path": "rows_out", "change": "changed", "a": 32, "b": 40}]}],
            "identical_outputs": ["plot"]}
    lines = present_runs.diff_lines(diff)
    assert lines[0] == "A  →  B"
    assert "Parameters (1 changed)" in lines and "  params.missing_strategy: remove → fill_mean" in lines
    assert "  profile: differs, 1 value(s) changed" in lines and "      rows_out: 32 → 40" in lines
    assert "  identical: plot" in lines


def test_the_header_names_the_guided_dialogue_or_the_model_and_its_server():
    assert present.backend_label(GuidedBackend()) == "guided dialogue (offline)"
    backend = OpenAIBackend("http://localhost:11434/v1", "qwen2.5:7b")
    assert present.backend_label(backend) == "qwen2.5:7b @ http://localhost:11434/v1"


def test_single_newlines_stay_line_breaks_except_in_code():
    text = "first\nsecond\n\n```\ncode\nmore\n```"
    assert present.keep_line_breaks(text) == "first  \nsecond  \n\n```\ncode\nmore\n```"
