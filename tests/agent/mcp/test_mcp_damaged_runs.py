"""Over MCP, list_runs lists every damaged run as unreadable with the reason, and run_status refuses one whose own
record is damaged, without waiting on a FIFO or reading /dev/zero (tests/damaged_runs.py's kinds, all at once).

The MCP SDK's own client against a real `snakegate mcp` process; every call is bounded by the session's timeout.
"""

from __future__ import annotations

from damaged_runs import DAMAGES, REASON, damaged_copy, real_run
from mcp_session import McpSession


def test_list_runs_over_mcp_lists_each_damaged_run_as_unreadable_with_the_reason(registry):
    good = real_run(registry)
    for kind in DAMAGES:
        damaged_copy(good, kind)
    with McpSession.stdio(registry) as s:
        listed = s.result(s.call("list_runs", {"limit": 50}))
        statuses = {kind: s.result(s.call("run_status", {"run_id": kind})) for kind in DAMAGES}
        still = s.result(s.call("run_status", {"run_id": good.name}))
    runs = {r["run_id"]: r for r in listed["runs"]}
    assert listed["total"] == len(DAMAGES) + 1 and runs[good.name]["status"] == "succeeded"
    for kind in DAMAGES:
        assert runs[kind]["status"] == "unreadable" and REASON[kind] in runs[kind]["unreadable"], runs[kind]
        if DAMAGES[kind][0] == "run.json":  # the run's own record: nothing to say but why
            error = statuses[kind]["error"]
            assert error["code"] == "unreadable_run" and REASON[kind] in error["message"], statuses[kind]
        else:
            assert statuses[kind]["status"] == "succeeded", statuses[kind]
    assert still["status"] == "succeeded"
