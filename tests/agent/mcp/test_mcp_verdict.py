"""Over MCP, a client asking about a finished run reads its verdict: the failing check, its value, what it means
and the params to look at (issue 25 §1).

The MCP SDK's own client against a real `snakegate mcp` process in a registry holding a real run of the tiny
`scored` workflow whose score check fails (tests/verdict_view_runs.py).
"""

from __future__ import annotations

from mcp_session import McpSession


def test_run_status_and_list_runs_over_mcp_give_the_verdict_and_the_advice(judged_registry, failing_run):
    with McpSession.stdio(judged_registry) as s:
        status = s.result(s.call("run_status", {"run_id": failing_run.name}))
        listed = s.result(s.call("list_runs", {}))["runs"]
    (score,) = status["verdict"]["failing"]
    assert status["verdict"]["status"] == "fail"
    assert (score["name"], score["value"], score["test"], score["threshold"]) == ("score", 0.3, ">=", 0.4)
    assert score["says"] == "The score is below the floor; raise score." and score["look_at"] == ["score"]
    assert {r["run_id"]: r["verdict"] for r in listed}[failing_run.name] == "fail"
