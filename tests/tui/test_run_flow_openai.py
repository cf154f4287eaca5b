"""The chat's whole flow in the app with the OpenAI backend, in each way a model may answer (native tool
calls, constrained JSON steps, tool calls written as text): request -> draft -> ctrl+r -> the run succeeds ->
the history lists it -> fork from the history with one change -> the model drafts the fork -> ctrl+r -> only
the downstream jobs re-run -> the history's diff shows the one param. Textual's pilot, the project's scripted
OpenAI-compatible HTTP server, the real gate and real Snakemake runs (the guided flow: test_run_flow.py).
"""

from __future__ import annotations

import asyncio
import re

import pytest

from chat_pilot import SIZE, assert_only_downstream_reran, connected, run_fork_and_diff, say, text_of
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, act, says

PENGUINS = "data/examples/tabular-penguins.csv"


def forked_run(body: dict) -> str:
    """The run the researcher asked to fork, from the last user message ("fork <run> name=value")."""
    last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return re.search(r"fork (\S+) ", last).group(1)


@pytest.mark.parametrize("mode", ["native", "json", "text"])
def test_request_to_run_to_fork_to_diff_in_the_app(mode, make_app, chat_registry):
    server = ScriptedOpenAI([
        act(mode, "describe_workflow", {"workflow": "tabular-profile"}),
        act(mode, "validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}}),
        says(mode, "The draft is ready: approve it in the panel."),
        lambda body: act(mode, "fork_run", {"run_id": forked_run(body), "changes": {"missing_strategy": "fill_mean"}}),
        says(mode, "The fork is drafted: approve it in the panel."),
    ])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start(),
                   tool_mode="json" if mode == "json" else "native")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, f"profile {PENGUINS}")
            assert text_of(app.query_one("#draft-status")).startswith("● Ready")
            return await run_fork_and_diff(pilot)

    try:
        parent, child = asyncio.run(scenario())
    finally:
        server.stop()
    origin = assert_only_downstream_reran(chat_registry, parent, child)["origin"]
    assert (origin["proposed_by_backend"], origin["answered_by"], origin["approved_by"]) == \
        ("openai-compatible", DEFAULT_MODEL, "Ada Tester")
    assert len(server.requests) == 5  # every scripted step was asked for, none twice
    # the mode really was the one named: constrained JSON steps, or the tool list for native and text form
    assert all(("response_format" in body, "tools" in body) == ((True, False) if mode == "json" else (False, True))
               for body in server.requests)
