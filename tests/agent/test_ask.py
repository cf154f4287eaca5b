"""`snakegate ask "<text>"`: one request to a gated draft without a terminal; `--yes` runs it with the person
who typed the command as the approver. The CLI (in-process, and as the console command in a fresh process for
the run), a real registry, the real guided dialogue or the scripted OpenAI-compatible server, real Snakemake.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from registry_copies import make_registry, run_names, snakegate
from snakegate.provenance import runstore

REQUEST = "profile data/examples/tabular-penguins.csv, fill missing values with the median"


def test_ask_stops_at_the_draft_and_prints_the_command_that_runs_it(tmp_path, cli):
    root = make_registry(tmp_path / "registry")
    code, out, err = cli("--registry", root, "ask", REQUEST, "--guided")
    assert code == 0, err
    draft = next(line for line in out.splitlines() if line.startswith("draft: "))
    path = draft.split()[1]
    assert (root / path).is_file() and "missing_strategy: fill_median" in (root / path).read_text()
    assert f"run it with: snakegate run {path}" in out
    assert run_names(root) == set()  # nothing ran


def test_ask_yes_runs_the_draft_with_the_typist_as_approver(tmp_path):
    root = make_registry(tmp_path / "registry")
    proc = snakegate(root, "ask", REQUEST, "--guided", "--yes", "--json", "--user", "Grace Hopper")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] and out["run"]["status"] == "succeeded" and out["run"]["approved_by"] == "Grace Hopper"
    record = runstore.read_run(root / out["run"]["folder"])
    origin = record["origin"]
    assert origin["approved_by"] == "Grace Hopper" and origin["proposed_by_backend"] == "guided"
    assert len(origin["transcript_sha256"]) == 64
    assert out["draft"]["command"] == f"snakegate run {out['draft']['path']}"


def test_ask_with_a_model_server_reaches_the_draft(tmp_path, cli):
    root = make_registry(tmp_path / "registry")
    with ScriptedOpenAI([[call("describe_workflow", {"workflow": "tabular-profile"})],
                         [call("validate_params", {"workflow": "tabular-profile",
                                                   "params": {"dataset_file": "data/examples/tabular-penguins.csv"}})],
                         "Draft ready."]) as url:
        code, stdout, _ = cli("--registry", root, "ask", "profile the penguins", "--model", DEFAULT_MODEL,
                              "--base-url", url, "--tool-mode", "native", "--json")
    out = json.loads(stdout)
    assert code == 0 and out["ok"] and out["draft"]["workflow"] == "tabular-profile"
    assert out["answered_by"] == DEFAULT_MODEL
    assert [e["name"] for e in out["events"] if e["kind"] == "action"] == ["describe_workflow", "validate_params"]


def test_ask_with_the_server_down_exits_2_naming_the_url(tmp_path, cli):
    root = make_registry(tmp_path / "registry")
    server = ScriptedOpenAI()
    url = server.bind()
    try:
        code, out, _ = cli("--registry", root, "ask", "profile the penguins", "--model", DEFAULT_MODEL,
                           "--base-url", url, "--tool-mode", "native")
    finally:
        server.stop()
    assert code == 2 and url in out and "no draft" in out


def test_ask_without_a_reachable_draft_exits_1_and_says_why(tmp_path, cli):
    root = make_registry(tmp_path / "registry")
    code, out, _ = cli("--registry", root, "ask", "quantum chromodynamics", "--guided")
    assert code == 1 and "no draft" in out and "No workflow matches" in out


def test_ask_refuses_guided_with_a_model(tmp_path, cli):
    root = make_registry(tmp_path / "registry")
    code, _, err = cli("--registry", root, "ask", "x", "--guided", "--model", "m")
    assert code == 2 and "--guided runs the offline dialogue" in err
