"""Execution needs a person: over MCP a draft runs only after the person confirms its exact config by elicitation.

The SDK's own client talks to a real `snakegate mcp` process (stdio; once streamable HTTP) over a throw-away
registry; runs are real Snakemake runs. "auto" mode speaks the 2026-07-28 protocol (the confirmation rides an
InputRequiredResult), "legacy" the handshake protocol (a standalone elicitation/create request).
"""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from mcp_session import (
    CLIENT, PENGUINS, McpSession, accept, audit_lines, cancel, decline, free_port, run_folders, start_http_server,
    stop_http_server,
)
from registry_copies import snakegate

MODES = ["auto", "legacy"]
CLIENT_LABEL = f"{CLIENT.name} {CLIENT.version}"


def _validated(s: McpSession, params: dict | None = None) -> dict:
    r = s.call("validate_params", {"workflow": "tabular-profile", "params": params or {"dataset_file": PENGUINS}})
    out = s.result(r)
    assert not r.is_error and out["ok"], out
    return out


def _prov_agents(run_dir) -> dict:
    return json.loads((run_dir / "prov.json").read_text())["agent"]


def _assert_origin(run_dir, approver: str) -> None:
    agents = _prov_agents(run_dir)
    proposer = [a for a in agents.values() if a.get("sg:backend") == "mcp"]
    assert [a["prov:label"] for a in proposer] == [CLIENT_LABEL]
    assert any(a.get("schema:name") == approver for a in agents.values())
    prov = json.loads((run_dir / "prov.json").read_text())
    roles = {(v["prov:agent"], v["prov:role"]["$"]) for v in prov["wasAssociatedWith"].values()
             if str(v.get("prov:activity", "")).endswith("/approval")}
    assert any(role == "sg:approver" and approver.split()[0] in agent for agent, role in roles), roles
    assert any(role == "sg:proposer" and "mcp" in agent for agent, role in roles), roles


def test_search_describe_validate_and_a_confirmed_execute_runs_and_provenance_names_client_and_approver(registry):
    with McpSession.stdio(registry, answer=accept("Grace Hopper")) as s:
        hits = s.result(s.call("search_workflows", {"query": "profile a csv table"}))["matches"]
        assert hits[0]["id"] == "tabular-profile"
        described = s.result(s.call("describe_workflow", {"workflow": "tabular-profile"}))
        assert "dataset_file" in [p["name"] for p in described["params"]]
        validated = _validated(s, {"dataset_file": PENGUINS, "missing_strategy": "fill_median"})
        draft = registry / validated["draft"]
        assert draft.is_file() and not run_folders(registry)  # validating never runs anything

        r = s.call("execute", {"invocation_id": validated["invocation_id"]})
        out = s.result(r)
        assert not r.is_error and out["status"] == "succeeded", out
        # the run's masked summary comes back to the client's model, as it enters the chat's conversation
        assert out["run_id"] in out["summary"] and "succeeded" in out["summary"] and "rows_in" in out["summary"]
        # the person was shown exactly the file that ran, and asked once
        assert len(s.elicitations) == 1
        assert draft.read_text() in s.elicitations[0].message
        assert s.elicitations[0].requested_schema["properties"]["run"]["type"] == "boolean"
        # progress notifications while Snakemake ran, ending with every job done
        totals = [(p, t) for p, t, _ in s.progress if t]
        assert totals and totals[-1][0] == totals[-1][1]

        # the run actions answer as in the chat
        listed = s.result(s.call("list_runs", {}))["runs"]
        assert [(r["run_id"], r["status"]) for r in listed] == [(out["run_id"], "succeeded")]
        status = s.result(s.call("run_status", {"run_id": "latest"}))
        assert status["params"]["missing_strategy"] == "fill_median" and all(o["exists"] for o in status["outputs"])
        explained = s.result(s.call("explain_run", {"run_id": out["run_id"]}))
        assert explained == out["explain"] and explained["key_numbers"]["profile"]["rows_in"] == 150
        fork = s.result(s.call("fork_run", {"run_id": "latest", "changes": {"missing_strategy": "remove"}}))
        assert fork["ok"] and fork["fork_of"] == out["run_id"] and (registry / fork["draft"]).is_file()
        assert fork["invocation_id"] != validated["invocation_id"]

    [run_dir] = run_folders(registry)
    assert run_dir.name == out["run_id"]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and record["invocation_id"] == validated["invocation_id"]
    assert record["origin"]["approved_by"] == "Grace Hopper" and record["origin"]["model"] == CLIENT_LABEL
    assert record["origin"]["proposed_by_backend"] == "mcp"
    _assert_origin(run_dir, "Grace Hopper")
    # the approval names the audit log as it stood when the person confirmed
    lines = (next((registry / ".snakegate" / "audit").glob("mcp-*")) / "calls.jsonl").read_text().splitlines()
    final = next(i for i, line in enumerate(lines) if json.loads(line).get("run_id"))
    seen = "".join(line + "\n" for line in lines[:final])
    assert record["origin"]["transcript_sha256"] == hashlib.sha256(seen.encode()).hexdigest()


def test_over_streamable_http_with_the_handshake_protocol_a_confirmed_execute_runs(registry):
    port = free_port()
    proc = start_http_server(registry, port)
    try:
        with McpSession.http(f"http://127.0.0.1:{port}/mcp", answer=accept("Katherine Johnson"),
                             mode="legacy") as s:
            assert [t.name for t in s.tools()][-2:] == ["execute", "execute_refinement"]
            validated = _validated(s)
            out = s.result(s.call("execute", {"invocation_id": validated["invocation_id"]}))
            assert out["status"] == "succeeded", out
            assert len(s.elicitations) == 1 and any(t for _, t, _ in s.progress)
    finally:
        stderr = stop_http_server(proc)
    assert "Traceback" not in stderr, stderr
    [run_dir] = run_folders(registry)
    _assert_origin(run_dir, "Katherine Johnson")


def test_cancelling_the_execute_call_cancels_the_run_and_records_it_cancelled(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        validated = _validated(s)
        s.call_and_cancel("execute", {"invocation_id": validated["invocation_id"]})
        # Snakemake gets SIGINT and stops its jobs; the call's audit line is written once the run is recorded
        deadline = time.monotonic() + 60
        while not [line for line in audit_lines(registry) if line.get("code") == "cancelled"] \
                and time.monotonic() < deadline:
            time.sleep(0.5)
        status = [r["status"] for r in s.result(s.call("list_runs", {}))["runs"]]
        # asking again says the draft already ran; declining that runs nothing more
        s.answer = decline()
        _validated(s)
        assert s.result(s.call("execute", {"invocation_id": validated["invocation_id"]}))["error"]["code"] == "declined"
        assert f"This draft already ran (run {run_folders(registry)[0].name})" in s.elicitations[-1].message
    assert status == ["cancelled"] and len(run_folders(registry)) == 1
    [run_dir] = run_folders(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["cancelled_by"] == "SIGINT" and not record["outputs"][-1]["exists"]
    assert (run_dir / "prov.json").is_file()


@pytest.mark.parametrize("mode", MODES)
def test_a_declined_cancelled_or_unticked_confirmation_runs_nothing(registry, mode):
    with McpSession.stdio(registry, answer=decline(), mode=mode) as s:
        validated = _validated(s)
        for answer, code in ((decline(), "declined"), (cancel(), "cancelled"), (accept(run=False), "declined")):
            s.answer = answer
            r = s.call("execute", {"invocation_id": validated["invocation_id"]})
            out = s.result(r)
            assert r.is_error and out["error"]["code"] == code and "nothing ran" in out["error"]["message"], out
            assert audit_lines(registry)[-1]["outcome"] == "refused" and audit_lines(registry)[-1]["code"] == code
        assert len(s.elicitations) == 3
    assert not run_folders(registry) and not (registry / "runs").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_elicitation_is_refused_with_the_command_the_person_can_run(registry, mode):
    with McpSession.stdio(registry, answer=None, mode=mode) as s:
        validated = _validated(s)
        out = s.result(s.call("execute", {"invocation_id": validated["invocation_id"]}))
    assert out["error"]["code"] == "needs_a_person"
    assert out["command"] == f"snakegate run {validated['draft']}" and out["command"] in out["error"]["hint"]
    assert not run_folders(registry)
    # the command names a config that passes the gate as it is
    assert snakegate(registry, "validate", validated["draft"]).returncode == 0


def test_execute_has_no_argument_through_which_a_model_could_approve(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        schema = next(t for t in s.tools() if t.name == "execute").input_schema
        assert list(schema["properties"]) == ["invocation_id"] and schema["additionalProperties"] is False
        validated = _validated(s)
        out = s.result(s.call("execute", {"invocation_id": validated["invocation_id"], "approved": True,
                                          "approved_by": "the model"}))
        assert out["error"]["code"] == "bad_arguments" and "`approved` is not an argument" in out["error"]["message"]
        assert not s.elicitations
    assert not run_folders(registry)


def test_unknown_and_stale_invocation_ids_are_refused_before_anyone_is_asked(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        unknown = s.result(s.call("execute", {"invocation_id": "0" * 64}))
        assert unknown["error"]["code"] == "unknown_invocation"

        # the draft file changed on disk after validate_params wrote it
        edited = _validated(s)
        draft = registry / edited["draft"]
        draft.write_text(draft.read_text().replace("remove", "fill_mean"))
        stale = s.result(s.call("execute", {"invocation_id": edited["invocation_id"]}))
        assert stale["error"]["code"] == "stale_draft" and edited["draft"] in stale["error"]["message"]

        # the registry changed: the workflow folder no longer hashes to what the invocation pinned
        current = _validated(s, {"dataset_file": PENGUINS, "missing_strategy": "fill_median"})
        skill = registry / "workflows" / "tabular-profile" / "SKILL.md"
        skill.write_text(skill.read_text() + "\nOne more line.\n")
        moved = s.result(s.call("execute", {"invocation_id": current["invocation_id"]}))
        assert moved["error"]["code"] == "stale_invocation" and "no longer gate" in moved["error"]["message"]
        assert not s.elicitations
    assert not run_folders(registry)
    codes = [line.get("code") for line in audit_lines(registry) if line.get("name") == "execute"]
    assert codes == ["unknown_invocation", "stale_draft", "stale_invocation"]
