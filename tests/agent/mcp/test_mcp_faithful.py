"""The MCP confirmation says when the draft differs from the request the person gave the prompt (issue 26 §1):
a client model that swaps the person's file for the demo table is caught before "Run" is ticked."""

from __future__ import annotations

import shutil

from mcp_session import McpSession, decline, run_folders

PENGUINS = "data/examples/tabular-penguins.csv"
MINE = "data/lab/field-penguins.csv"


def test_confirmation_shows_that_the_draft_reads_another_file_than_the_one_asked_for(registry):
    (registry / "data" / "lab").mkdir()
    shutil.copy(registry / PENGUINS, registry / MINE)
    with McpSession.stdio(registry, answer=decline()) as s:
        (prompt,) = s.prompts()
        s.prompt(prompt.name, {"request": f"profile {MINE}"})
        swapped = s.result(s.call("validate_params", {"workflow": "tabular-profile",
                                                      "params": {"dataset_file": PENGUINS}}))
        assert swapped["differs_from_request"] == [f"you named {MINE}; the draft reads {PENGUINS} instead "
                                                   "(dataset_file)"]
        s.call("execute", {"invocation_id": swapped["invocation_id"]})
        faithful = s.result(s.call("validate_params", {"workflow": "tabular-profile",
                                                       "params": {"dataset_file": MINE}}))
        assert "differs_from_request" not in faithful
        s.call("execute", {"invocation_id": faithful["invocation_id"]})
        differs, same = [e.message for e in s.elicitations]
    assert "DIFFERS FROM YOUR REQUEST" in differs and f"you named {MINE}" in differs
    assert differs.index("DIFFERS") < differs.index("Exactly this config will run")
    assert "DIFFERS" not in same
    assert not run_folders(registry)  # declined: nothing ran
