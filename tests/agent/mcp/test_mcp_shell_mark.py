"""The MCP confirmation warns when a community workflow pastes a value into a shell command unquoted and the
value holds characters the shell would run: the person sees it before ticking "Run"."""

from __future__ import annotations

from mcp_session import McpSession, decline, run_folders
from registry_copies import make_registry, one_rule_workflow

LABEL_NOTE = one_rule_workflow("label-note", "Label note", "Writes a note from a free-text label.",
                               "echo {params.label} > {output.note}")
WARNING = "Warning: the value of `label` reaches a shell command unquoted"


def test_confirmation_warns_about_a_value_that_would_run_a_command_and_not_about_a_plain_one(tmp_path):
    registry = make_registry(tmp_path / "registry", {"label-note": LABEL_NOTE}, with_git=True)
    with McpSession.stdio(registry, answer=decline()) as s:
        for label in ("hello; touch pwned", "hello"):
            validated = s.result(s.call("validate_params", {"workflow": "label-note", "params": {"label": label}}))
            assert validated["ok"], validated
            s.call("execute", {"invocation_id": validated["invocation_id"]})
        risky, plain = [e.message for e in s.elicitations]
    assert WARNING in risky and "; | & $" in risky
    assert WARNING not in plain and "unquoted" not in plain
    assert not run_folders(registry) and not list(registry.rglob("pwned"))  # declined: nothing ran
