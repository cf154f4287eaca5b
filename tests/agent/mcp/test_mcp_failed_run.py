"""Over MCP, asking about a run that failed answers with the failing rule and the real error, never an internal error.

The MCP SDK's own client against a real `snakegate mcp` process: the person confirms a run of a workflow whose one
job fails (a real Snakemake run), then the client asks run_status, list_runs and explain_run about it.
"""

from __future__ import annotations

import pytest

from mcp_session import SECRET_NOTE, McpSession, accept, audit_lines
from registry_copies import make_registry, one_rule_workflow

FAILING = one_rule_workflow(
    "failing-note", "Failing note", "Always fails, with a real error in its log.",
    "echo 'ValueError: the column {params.label} is empty' > {log}; exit 3",
    label={"type": "string", "default": "flux", "description": "A column name."}, log=True)


@pytest.fixture
def registry(tmp_path):
    return make_registry(tmp_path / "registry", {"secret-note": SECRET_NOTE, "failing-note": FAILING}, with_git=True)


def test_run_status_of_a_failed_run_over_mcp_names_the_rule_and_the_error(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        validated = s.result(s.call("validate_params", {"workflow": "failing-note", "params": {}}))
        ran = s.result(s.call("execute", {"invocation_id": validated["invocation_id"]}))
        assert ran["status"] == "failed", ran
        r = s.call("run_status", {"run_id": ran["run_id"]})
        status = s.result(r)
        listed = s.result(s.call("list_runs", {"status": "failed"}))["runs"]
    assert not r.is_error and "error" not in status, status
    assert status["status"] == "failed" and status["run_id"] == ran["run_id"]
    assert status["failure"]["rule"] == "note"
    assert "ValueError: the column flux is empty" in status["failure"]["error"]
    assert [x["run_id"] for x in listed] == [ran["run_id"]]
    line = [a for a in audit_lines(registry) if a.get("name") == "run_status"][-1]
    assert line["outcome"] == "ok", line
