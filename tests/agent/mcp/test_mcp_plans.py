"""Plans over MCP: the same plan actions and plan gate as the chat; `execute` of a plan draft asks the person
by elicitation, showing the plan's steps and the edges between them before the exact config, and only
their confirmation runs it (through the runner, as one plan run); a refusal names the step and field; a
sensitive value in a step is refused before anything uses it; a plan whose input changed is not run.

The MCP SDK's own client against a real `snakegate mcp` process; runs are real Snakemake runs.
"""

from __future__ import annotations

import copy
import json

import pytest

from mcp_session import McpSession, accept, audit_text, decline, run_folders
from plan_registry import BENCH, CLEAN, PENGUINS, make_plan_registry

from mcp_session import SECRET_NOTE

SECRET = "mcp-plan-s3cret-99"


@pytest.fixture
def plan_registry(tmp_path):
    return make_plan_registry(tmp_path / "registry", {"secret-note": SECRET_NOTE}, with_git=True)


def _proposed(s: McpSession, *steps, label: str = "sexes") -> dict:
    r = s.call("propose_plan", {"label": label, "steps": [copy.deepcopy(x) for x in steps]})
    out = s.result(r)
    assert not r.is_error and out["ok"], out
    return out


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_plan_runs_only_after_the_person_confirms_its_steps_and_edges(plan_registry, mode):
    with McpSession.stdio(plan_registry, answer=accept("Grace Hopper"), mode=mode) as s:
        links = s.result(s.call("find_connections", {"workflow": "tabular-profile", "output": "cleaned"}))
        assert ("classifier-benchmark", "dataset") in {(c["consumer"], c["param"])
                                                       for c in links["outputs"][0]["consumed_by"]}
        proposed = _proposed(s, CLEAN, BENCH)
        draft = plan_registry / proposed["draft"]
        assert proposed["draft"] == f"drafts/sexes-{proposed['invocation_id'][:12]}.yaml" and draft.is_file()
        assert not run_folders(plan_registry)  # proposing never runs anything

        r = s.call("execute", {"invocation_id": proposed["invocation_id"]})
        out = s.result(r)
        assert not r.is_error and out["status"] == "succeeded", out
    (asked,) = s.elicitations
    lines = asked.message.splitlines()
    steps_at = lines.index("Its steps, in run order, and what each takes from another:")
    assert lines[steps_at + 1:steps_at + 4] == ["  clean: tabular-profile 1.0.0", "  bench: classifier-benchmark 1.0.0",
                                                "    dataset ← clean.cleaned"]
    assert lines[:2] == ["snakegate-tests 1.2.3 asks snakegate to run plan sexes (2 steps)",
                         f"(invocation {proposed['invocation_id'][:12]}…)."]
    assert all(len(line) <= 80 for line in lines[:steps_at + 4])  # readable in an 80-column terminal
    assert draft.read_text() in asked.message  # and the exact config that runs
    run_dir = plan_registry / out["run_folder"]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["kind"] == "plan" and record["invocation_id"] == proposed["invocation_id"]
    assert record["origin"]["approved_by"] == "Grace Hopper" and record["origin"]["proposed_by_backend"] == "mcp"
    assert (run_dir / "steps" / "bench" / "results" / "metrics.json").is_file()


def test_a_declined_plan_runs_nothing(plan_registry):
    with McpSession.stdio(plan_registry, answer=decline()) as s:
        proposed = _proposed(s, CLEAN, BENCH)
        out = s.result(s.call("execute", {"invocation_id": proposed["invocation_id"]}))
    assert out["error"]["code"] == "declined" and not run_folders(plan_registry)


def test_a_plan_whose_input_changed_since_it_was_proposed_is_not_run(plan_registry):
    with McpSession.stdio(plan_registry, answer=accept()) as s:
        proposed = _proposed(s, CLEAN, BENCH)
        table = plan_registry / PENGUINS
        table.write_text(table.read_text().replace("Adelie", "Adelia", 1))
        out = s.result(s.call("execute", {"invocation_id": proposed["invocation_id"]}))
    assert out["error"]["code"] == "stale_invocation" and "nothing ran" in out["error"]["message"]
    assert not s.elicitations and not run_folders(plan_registry)  # the person is not even asked


def test_a_plan_refusal_over_mcp_names_the_step_and_field(plan_registry):
    typo = copy.deepcopy(BENCH)
    typo["params"]["label_column"] = "sexx"
    with McpSession.stdio(plan_registry) as s:
        r = s.call("propose_plan", {"steps": [CLEAN, typo]})
        out = s.result(r)
        fixed = s.result(s.call("replace_step", BENCH))
    assert r.is_error and [(e["step"], e["field"], e["code"]) for e in out["errors"]] == [
        ("bench", "label_column", "column_missing")]
    assert out["errors"][0]["question"].startswith("Step `bench` (classifier-benchmark), `label_column`:")
    assert fixed["ok"] and fixed["draft"].startswith("drafts/plan-")  # the server kept the plan between calls


def test_a_sensitive_value_in_a_plan_step_is_refused_before_anything_uses_it(plan_registry):
    note = {"name": "note", "workflow": "secret-note", "params": {"label": "hi", "token": SECRET}}
    with McpSession.stdio(plan_registry) as s:
        r = s.call("propose_plan", {"steps": [CLEAN, note]})
        out = s.result(r)
        later = s.result(s.call("validate_plan", {}))
    assert r.is_error and out["error"]["code"] == "sensitive_value"
    assert "`steps.note.params.token`" in out["error"]["message"]
    assert later["error"]["code"] == "no_plan"  # it never became the plan
    assert SECRET not in "\n".join(s.responses) and SECRET not in audit_text(plan_registry)
    assert not (plan_registry / "drafts").exists()
