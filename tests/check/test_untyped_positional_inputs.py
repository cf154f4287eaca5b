"""An unnamed input whose expand()s make a varying number of files (multiqc's ten inputs in
rna-seq-star-deseq2) cannot be typed by position, so the edge's types are unknown, not wrong: an error for a
curated workflow, a warning for a community one, which then passes check without renaming ten lines of its
rules (issue 27 §2: ≤ 5 changed lines per real workflow).

Pure: a Snakefile read by the check's reader, the DAG as plain data, the proof.
"""
import textwrap

import pytest

from snakegate.check import WorkflowFacts
from snakegate.check.edges import edge_findings
from snakegate.check.facts import ExampleFacts
from snakegate.check.reading import read_workflow
from snakegate.gate.dag import Dag, DagJob

SNAKEFILE = """
SAMPLES = ["x", "y"]
rule align:
    output: "a/{s}.bam"
    shell: "touch {output}"
rule count:
    output: "b/{s}.txt"
    shell: "touch {output}"
rule multiqc:
    input: expand("a/{s}.bam", s=SAMPLES), expand("b/{s}.txt", s=SAMPLES)
    output: "qc.html"
    shell: "touch {output}"
"""


def _job(rule, output, inputs=(), producers=None):
    return DagJob(rule=rule, input=list(inputs), output=[output], named_input={}, named_output={}, params={},
                  log=[], producers=producers or {})


def _facts(tmp_path, trust):
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(textwrap.dedent(SNAKEFILE))
    reads = ["a/x.bam", "a/y.bam", "b/x.txt", "b/y.txt"]
    jobs = [_job("align", "a/x.bam"), _job("align", "a/y.bam"), _job("count", "b/x.txt"), _job("count", "b/y.txt"),
            _job("multiqc", "qc.html", reads, {p: "align" if p.endswith(".bam") else "count" for p in reads})]
    manifest = {"trust": trust, "rules": {"align": {"output": {"_1": "bam"}}, "count": {"output": {"_1": "text"}},
                                          "multiqc": {"input": {"_1": "bam", "_2": "text"},
                                                      "output": {"_1": "html"}}}}
    return WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path), manifest=manifest,
                         schema={"type": "object"}, source=read_workflow(folder, tmp_path),
                         examples=[ExampleFacts(name="workflows/wf/examples/a.yaml", resolved_params={},
                                                dag=Dag(jobs=jobs, rules={}))])


@pytest.mark.parametrize("trust, severity", [("curated", "error"), ("community", "warning")])
def test_an_input_that_cannot_be_typed_by_position_is_named_once_with_its_tiers_severity(tmp_path, trust, severity):
    (found,) = edge_findings(_facts(tmp_path, trust))
    assert (found.code, found.severity, found.rule) == ("io_name_unknown", severity, "multiqc")
    assert "cannot be typed by position" in found.message and f"for the {trust} tier" in found.message
    assert "name the input" in found.hint
