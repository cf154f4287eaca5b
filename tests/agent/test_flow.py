"""The whole chat flow with the OpenAI backend, in each way a model may answer: native tool calls, one
constrained JSON object per step, and tool calls written as text.

request -> describe -> validate -> draft -> approve -> the run succeeds -> list_runs shows it -> fork_run with
one change -> approve -> only the jobs downstream of the change re-run -> compare_runs shows the one param.
Real scripted HTTP server, real OpenAIBackend, real gate, real Snakemake runs.
"""

from __future__ import annotations

import json
import re

import pytest

from openai_server import DEFAULT_MODEL, act, says as say
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import DraftReady
from snakegate.provenance import runstore

PENGUINS = "data/examples/tabular-penguins.csv"
RUN_ID = re.compile(r'\\"run_id\\": \\"(\d{8}T\d{6}Z-[0-9a-f]{8})\\"')


def runs_seen(body: dict) -> list[str]:
    """The run ids the model was shown (list_runs' answer), newest first."""
    return RUN_ID.findall(json.dumps(body["messages"]))


@pytest.mark.parametrize("mode", ["native", "json", "text"])
def test_request_to_run_to_fork_to_diff(mode, openai_server, make_conversation):
    tool_mode = "json" if mode == "json" else "native"
    server = openai_server([
        act(mode, "describe_workflow", {"workflow": "tabular-profile"}),
        act(mode, "validate_params", {"workflow": "tabular-profile",
                                      "params": {"dataset_file": PENGUINS, "missing_strategy": "fill_median"}}),
        say(mode, "The draft is ready; approve it to run."),
        act(mode, "list_runs", {}),
        lambda body: act(mode, "fork_run", {"run_id": runs_seen(body)[0], "changes": {"missing_strategy": "fill_mean"}}),
        say(mode, "The fork is drafted; approve it."),
    ])
    convo = make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode=tool_mode))
    events = convo.send("profile data/examples/tabular-penguins.csv, fill missing values with the median")
    (draft,) = [e.draft for e in events if isinstance(e, DraftReady)]
    assert draft.params["missing_strategy"] == "fill_median"
    first = convo.execute(convo.approve("Ada Lovelace"))
    assert first.status == "succeeded", first.record

    events = convo.send("same run but fill with the mean")
    (fork,) = [e.draft for e in events if isinstance(e, DraftReady)]
    assert fork.fork.parent_run == first.run_id and fork.params["missing_strategy"] == "fill_mean"
    second = convo.execute(convo.approve("Ada Lovelace"))
    assert second.status == "succeeded", second.record
    record = runstore.read_run(second.run_dir)
    assert record["parent_run"] == first.run_id
    assert "load" not in record["jobs_executed"] and "clean" in record["jobs_executed"]  # only downstream re-ran

    server.add(act(mode, "compare_runs", {"a": first.run_id, "b": second.run_id}), say(mode, "Only the fill changed."))
    convo.send("what changed between the two?")
    # the result is the last message: a tool message, or in JSON mode a user message "Result of compare_runs: {...}"
    compared = json.loads(server.requests[-1]["messages"][-1]["content"].removeprefix("Result of compare_runs: "))
    assert [(c["path"], c.get("a"), c.get("b")) for c in compared["params"]] == \
        [("params.missing_strategy", "fill_median", "fill_mean")]
