"""Issue 27 §2: a rule's unnamed inputs and outputs are named `_1`, `_2`, ... by position, also when no job of it
is in the DAG (no target requests it). Snakemake's hello-world keeps its `download_data` rule after its data
became a param, and word-count drafted as is has no job at all: workflow.yaml must declare their outputs (a rule
with outputs has to be), so check must not then call the declared `_1` unknown ("it has: none").
"""
from pathlib import Path

from snakegate.check import ExampleFacts, WorkflowFacts
from snakegate.check.reading import read_workflow
from snakegate.check.ruleio import rule_findings
from snakegate.gate.dag import Dag, DagJob

SNAKEFILE = """rule all:
    input: "plots/a.svg"

rule plot:
    input: "data/a.csv"
    output: "plots/a.svg"
    shell: "touch {output}"

rule download_data:
    output: "data/cities.csv", "data/readme.txt"
    shell: "curl -L https://example.org/cities.csv > {output[0]}"
"""


def _findings(tmp_path: Path, declared_outputs: dict) -> list:
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(SNAKEFILE)
    job = DagJob(rule="plot", input=["data/a.csv"], output=["plots/a.svg"], named_input={}, named_output={},
                 params={}, log=[])
    dag = Dag(jobs=[job], rules={"all": {"input": [], "output": [], "has_output": False},
                                 "plot": {"input": [], "output": [], "has_output": True},
                                 "download_data": {"input": [], "output": [], "has_output": True}})
    manifest = {"id": "wf", "rules": {"plot": {"input": {"_1": "csv-table"}, "output": {"_1": "svg"}},
                                      "download_data": {"output": declared_outputs}}}
    return rule_findings(WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path),
                                       manifest=manifest, source=read_workflow(folder, tmp_path),
                                       examples=[ExampleFacts(name="workflows/wf/examples/a.yaml", dag=dag)]))


def test_the_unnamed_outputs_of_a_rule_without_a_job_are_known_by_position(tmp_path):
    assert _findings(tmp_path, {"_1": "csv-table", "_2": "text"}) == []


def test_a_position_the_rule_does_not_have_is_still_unknown_and_the_message_lists_the_real_ones(tmp_path):
    (found,) = _findings(tmp_path, {"_1": "csv-table", "_3": "text"})
    assert found.code == "io_name_unknown" and found.rule == "download_data"
    assert "has no output named `_3` (it has: _1, _2)" in found.message
