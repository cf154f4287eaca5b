"""The reproducibility bench (bench/bench_repro.py, issue 25.4) with the scripted model over real HTTP: the same
fully specified request, sent twice through the chat front door in fresh conversations, gives one invocation
id and, run, one set of outputs. No timing is asserted (speed lives in bench/)."""

from __future__ import annotations

import importlib.util
import sys

from registry_copies import REPO


def load_bench():
    sys.path.insert(0, str(REPO / "bench"))  # bench_repro imports its sibling bench_llm, as when run as a script
    spec = importlib.util.spec_from_file_location("bench_repro", REPO / "bench" / "bench_repro.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_same_request_through_the_chat_gives_one_invocation_and_one_output_set():
    result = load_bench().measure(n=2)
    assert result["drafts"] == 2, result["rows"]
    assert (result["distinct_invocation_ids"], result["distinct_output_sets"]) == (1, 1), result["rows"]
    assert all(row["status"] == "succeeded" for row in result["rows"])
    assert len({row["run_id"] for row in result["rows"]}) == 2  # two real runs, not one run counted twice
