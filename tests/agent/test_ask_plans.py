"""`snakegate ask` with a request for a chain: the guided dialogue keeps the defaults of what the request
does not name and stops at a plan draft (its steps and edges in `--json`), or says why there is none.
The CLI in-process, a throw-away registry, the real guided dialogue and plan gate; nothing runs.
"""

from __future__ import annotations

import json

from plan_registry import make_plan_registry
from registry_copies import run_names

CHAIN = ("profile data/examples/tabular-penguins.csv, then benchmark a classifier on the cleaned result "
         "with label_column=sex")


def test_ask_for_a_chain_stops_at_a_plan_draft_with_its_steps_and_edges(tmp_path, cli):
    root = make_plan_registry(tmp_path / "registry")
    code, out, err = cli("--registry", root, "ask", CHAIN, "--guided", "--json")
    assert code == 0, err
    answer = json.loads(out)
    draft = answer["draft"]
    assert draft["workflow"] == "plan" and draft["command"] == f"snakegate run {draft['path']}"
    assert draft["steps"] == [
        {"name": "profile", "workflow": "tabular-profile", "version": "1.0.0", "takes": []},
        {"name": "benchmark", "workflow": "classifier-benchmark", "version": "1.0.0",
         "takes": [{"param": "dataset", "from": "profile", "output": "cleaned"}]}]
    assert "label_column: sex" in (root / draft["path"]).read_text()
    code, out, _ = cli("--registry", root, "ask", CHAIN, "--guided")
    assert code == 0 and "(plan (2 steps), invocation " in out
    assert run_names(root) == set()  # nothing ran


def test_ask_for_a_chain_the_gate_refuses_ends_without_a_draft_naming_the_step_and_field(tmp_path, cli):
    root = make_plan_registry(tmp_path / "registry")
    code, out, err = cli("--registry", root, "ask", CHAIN.replace("label_column=sex", "label_column=sexx"),
                         "--guided")
    assert code == 1 and "no draft" in out + err
    # ask prints plain text, wrapped (tests/commands/test_ask_plain.py): read it as one line without markup
    assert "steps.benchmark.params.label_column value sexx is not a column" in " ".join(out.split())
