"""Issue 27 §2: a workflow that lists its inputs by globbing the working folder is named by `snakegate check`.

CodeRefinery's word-count (tests/realworkflows/word-count) does `glob_wildcards('data/{book}.txt')`: started in
its project folder that finds its books; on the registry path the working folder is the registry root, so the
DAG is silently empty (or holds files no param names) and check only reported the consequences. The proof is
pure: these tests read real Snakefiles with the check's reader and hand its facts to the proof.
"""
from pathlib import Path

import pytest

from snakegate.check import CODES, WorkflowFacts
from snakegate.check.reading import read_workflow
from snakegate.check.workfolder import CODE, glob_findings


def _findings(tmp_path: Path, snakefile: str) -> list:
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(snakefile)
    source = read_workflow(folder, tmp_path)
    return glob_findings(WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path),
                                       source=source))


def test_a_glob_of_the_working_folder_at_parse_time_is_an_error_naming_the_pattern_file_and_line(tmp_path):
    (found,) = _findings(tmp_path, "# the books\nDATA = glob_wildcards('data/{book}.txt').book\n\n"
                                   "rule all:\n    input: expand('out/{b}.txt', b=DATA)\n")
    assert found.code == CODE and CODE in CODES and found.severity == "error"
    assert (found.file, found.line, found.rule) == ("workflows/wf/Snakefile", 2, None)
    assert "a glob of `data/{book}.txt` in the working folder" in found.message and "no param names them" in found.message
    assert "take the list from a param" in found.hint


@pytest.mark.parametrize("call", ["glob.glob('tables/*.csv')", "glob.iglob('tables/*.csv')"])
def test_a_glob_module_listing_inside_an_input_function_names_its_rule(tmp_path, call):
    (found,) = _findings(tmp_path, f"import glob\n\nrule merge:\n    input: lambda w: sorted({call})\n"
                                   "    output: 'merged.csv'\n    shell: 'cat {{input}} > {{output}}'\n")
    assert found.rule == "merge" and "`tables/*.csv`" in found.message


@pytest.mark.parametrize("pattern", ["config['books'] + '/{book}.txt'", "workflow.source_path('data/{book}.txt')",
                                     "f\"{config['dir']}/{{book}}.txt\""])
def test_a_glob_whose_pattern_comes_from_the_params_or_the_workflow_folder_is_not_reported(tmp_path, pattern):
    assert _findings(tmp_path, f"DATA = glob_wildcards({pattern}).book\n\n"
                               "rule all:\n    input: expand('out/{b}.txt', b=DATA)\n") == []
