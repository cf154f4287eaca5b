"""Issue 27 §2: `snakegate check` reports every missing input, not only the first one Snakemake stopped at.

Building a DAG stops at the first job whose input is missing, so word-count (tests/realworkflows), whose two
scripts are named relative to the working folder, showed `code/count.py` and hid `code/plot.py`. The files
the Snakefile names as plain strings and no rule can make are added to that finding. Pure: a real Snakefile
read with the check's reader, and the DAG error Snakemake gives for it.
"""
from pathlib import Path

from snakegate.check import ExampleFacts, WorkflowFacts
from snakegate.check.examples import example_findings
from snakegate.check.reading import read_workflow

SNAKEFILE = """rule all:
    input: "plot/a.png"

rule count:
    input: script="code/count.py", book=config["book"]
    output: "statistics/a.data"
    shell: "python {input.script} {input.book} > {output}"

rule plot:
    input: script="code/plot.py", data="statistics/a.data", style=workflow.source_path("style.mplstyle")
    output: "plot/a.png"
    shell: "python {input.script} {input.data} {output}"

rule legend:
    input: "legend/{name}.txt", "/opt/fonts/serif.ttf"
    output: "legend/{name}.png"
    shell: "touch {output}"
"""
ERROR = ("MissingInputException in rule count in file Snakefile, line 4:\n"
         "Missing input files for rule count:\n    output: statistics/a.data\n    affected files:\n        code/count.py")


def test_the_first_missing_input_names_the_others_the_snakefile_gives_as_plain_strings(tmp_path: Path):
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(SNAKEFILE)
    facts = WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path),
                          source=read_workflow(folder, tmp_path),
                          examples=[ExampleFacts(name="workflows/wf/examples/a.yaml", dag_error=(ERROR, None, None))])
    (found,) = example_findings(facts)
    assert found.code == "hidden_input" and found.rule == "count"
    assert found.message.startswith("a.yaml: rule `count` reads code/count.py, which no job produces")
    # made by a rule (statistics/a.data), a pattern, an absolute path, a config value, a source_path: not listed
    assert found.message.endswith("Snakemake stops at the first job whose input is missing, and the Snakefile "
                                  "names more files no rule makes: `plot`: code/plot.py")
