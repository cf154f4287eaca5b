"""Issue 27 §2: a script started from `shell:` (`python scripts/x.py`, `Rscript {workflow.basedir}/x.R`,
`bash {input.script}`, `python -m pkg.mod`) gets the scan a `script:` file gets, and a script the run's pinned
copy does not hold (outside the workflow folder, or found from the working folder) is named: what runs must be
what was checked. A Python script's imports are held to this environment as the Snakefile's are. Commands the
reader does not know are not guessed at.

Pure: small workflows written here are read with the check's reader and their facts handed to the proofs.
"""
import textwrap
from pathlib import Path

import pytest

from snakegate.check import CODES, WorkflowFacts
from snakegate.check.packages import look_up, package_findings
from snakegate.check.reading import read_workflow
from snakegate.check.unprovable import UNPINNED, rule_findings, script_findings
from snakegate.provenance.hashing import workflow_hash

DOWNLOADER = "import requests\nrows = requests.get('https://example.org/data.csv').text\n"


def _facts(tmp_path: Path, snakefile: str, trust: str = "community", **files: str) -> WorkflowFacts:
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(textwrap.dedent(snakefile))
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path),
                         manifest={"trust": trust}, source=read_workflow(folder, tmp_path))


def _rule(shell: str, inputs: str = '"data/in.csv"') -> str:
    return f"rule fetch:\n    input: {inputs}\n    output: \"out.csv\"\n    shell: {shell!r}\n"


def _findings(f: WorkflowFacts):
    return rule_findings(f) + script_findings(f)


@pytest.mark.parametrize("shell, inputs", [
    ("python {workflow.basedir}/scripts/fetch.py {input} > {output}", '"data/in.csv"'),
    ("set -e; python3 -u -W ignore {workflow.basedir}/scripts/fetch.py {input} {output}", '"data/in.csv"'),
    ("python {input.script} {input.table} > {output}",
     'script=workflow.source_path("scripts/fetch.py"), table="data/in.csv"'),
    ("python {input.script} {input.table} > {output}",
     'script=os.path.join(workflow.basedir, "scripts/fetch.py"), table="data/in.csv"'),
    ("python {input[0]} {input[1]} > {output}", 'workflow.source_path("scripts/fetch.py"), "data/in.csv"'),
])
def test_a_python_script_started_from_shell_is_scanned_for_downloads_like_a_script_file(tmp_path, shell, inputs):
    f = _facts(tmp_path, "import os\n" + _rule(shell, inputs), **{"workflows/wf/scripts/fetch.py": DOWNLOADER})
    (download,) = [x for x in _findings(f) if x.code == "download"]
    assert download.message.startswith("workflows/wf/scripts/fetch.py downloads with `requests.get(")
    assert (download.rule, download.file, download.line) == ("fetch", "workflows/wf/scripts/fetch.py", 2)
    assert not [x for x in _findings(f) if x.code == UNPINNED]


def test_a_script_started_from_shell_opening_a_literal_path_is_a_hidden_read(tmp_path):
    f = _facts(tmp_path, _rule("python {workflow.basedir}/tools/sum.py {input} > {output}"),
               **{"workflows/wf/tools/sum.py": "import sys\nrows = open('/home/lab/extra.csv').read()\n"})
    (hidden,) = [x for x in _findings(f) if x.code == "hardcoded_path"]
    assert "tools/sum.py opens the literal path `/home/lab/extra.csv`" in hidden.message and hidden.line == 2


def test_an_r_script_started_with_rscript_is_scanned_for_the_files_it_reads(tmp_path):
    f = _facts(tmp_path, _rule("Rscript --vanilla {workflow.basedir}/R/plot.R {input} {output}"),
               **{"workflows/wf/R/plot.R": 'x <- read.csv("data/other.csv")\n'})
    (hidden,) = [x for x in _findings(f) if x.code == "hardcoded_path"]
    assert "workflows/wf/R/plot.R opens the literal path `data/other.csv`" in hidden.message


def test_a_bash_script_started_from_shell_is_scanned_like_a_shell_command(tmp_path):
    f = _facts(tmp_path, _rule("bash {workflow.basedir}/get.sh {output}"),
               **{"workflows/wf/get.sh": "# from https://example.org (a citation)\nwget -O $1 https://x.org/a\n"})
    (download,) = [x for x in _findings(f) if x.code == "download"]
    assert download.message.startswith("workflows/wf/get.sh downloads (`wget`)") and download.rule == "fetch"


def test_a_module_the_workflow_ships_started_with_python_dash_m_is_scanned(tmp_path):
    f = _facts(tmp_path, _rule("cd {workflow.basedir} && python -m tools.fetch {output}"),
               **{"workflows/wf/tools/fetch.py": DOWNLOADER, "workflows/wf/tools/__init__.py": ""})
    assert [x.file for x in _findings(f) if x.code == "download"] == ["workflows/wf/tools/fetch.py"]


def test_a_script_started_from_the_working_folder_is_named_once_with_the_fix(tmp_path):
    f = _facts(tmp_path, _rule("python scripts/fetch.py {input} > {output}"),
               **{"workflows/wf/scripts/fetch.py": "print(1)\n"})
    found = _findings(f)
    (unpinned,) = [x for x in found if x.code == UNPINNED]
    assert unpinned.severity == "error" and unpinned.rule == "fetch"
    assert "starts `scripts/fetch.py` from the working folder (the registry root" in unpinned.message
    assert "{workflow.basedir}/<path>" in unpinned.hint and "workflow.source_path" in unpinned.hint
    assert not [x for x in found if "scripts/fetch.py" in x.message and x.code != UNPINNED]


def test_the_scan_of_a_script_found_from_the_working_folder_still_reports_what_it_does(tmp_path):
    f = _facts(tmp_path, _rule("python scripts/fetch.py {input} > {output}"),
               **{"workflows/wf/scripts/fetch.py": DOWNLOADER})
    assert sorted(x.code for x in _findings(f)) == ["download", UNPINNED]


@pytest.mark.parametrize("snakefile, file", [
    (_rule("python {workflow.basedir}/../shared/fetch.py {input} > {output}"), "workflows/shared/fetch.py"),
    ('rule fetch:\n    output: "out.csv"\n    script: "../shared/fetch.py"\n', "workflows/shared/fetch.py"),
    (_rule("python {workflow.basedir}/test/fetch.py {input} > {output}"), "workflows/wf/test/fetch.py"),
])
def test_a_script_the_runs_pinned_copy_does_not_hold_is_an_error_for_every_tier(tmp_path, snakefile, file):
    f = _facts(tmp_path, snakefile, trust="community", **{file: "print(1)\n"})
    (unpinned,) = [x for x in _findings(f) if x.code == UNPINNED]
    assert unpinned.severity == "error" and unpinned.file == file
    assert "the invocation's hash does not cover it and the run's copy of the workflow does not hold it" \
        in unpinned.message
    assert UNPINNED in CODES


def test_a_missing_script_named_from_the_workflows_folder_is_reported(tmp_path):
    f = _facts(tmp_path, _rule("python {workflow.basedir}/scripts/gone.py {input} > {output}"))
    (missing,) = script_findings(f)
    assert missing.message == "rule `fetch` runs workflows/wf/scripts/gone.py, which does not exist"


@pytest.mark.parametrize("shell", ["{workflow.basedir}/scripts/fetch.py {input} > {output}",
                                   "mytool {workflow.basedir}/scripts/fetch.py > {output}",
                                   "python {params.script} > {output}",
                                   "python -c 'print(1)' > {output}"])
def test_commands_the_reader_does_not_know_are_not_guessed_at(tmp_path, shell):
    f = _facts(tmp_path, _rule(shell), **{"workflows/wf/scripts/fetch.py": DOWNLOADER})
    assert f.source.scripts == [] and _findings(f) == []


def test_a_clean_script_started_from_the_workflows_folder_adds_no_finding(tmp_path):
    f = _facts(tmp_path, _rule("python {workflow.basedir}/scripts/sum.py {input} > {output}"),
               **{"workflows/wf/scripts/sum.py": "import sys\nprint(sum(1 for _ in open(sys.argv[1])))\n"})
    assert [s.file for s in f.source.scripts] == ["workflows/wf/scripts/sum.py"] and _findings(f) == []


def test_editing_a_shell_started_script_changes_the_hash_the_invocation_pins(tmp_path):
    f = _facts(tmp_path, _rule("python {workflow.basedir}/scripts/sum.py {input} > {output}"),
               **{"workflows/wf/scripts/sum.py": "print(1)\n"})
    before = workflow_hash(f.folder)
    (tmp_path / "workflows/wf/scripts/sum.py").write_text("print(2)\n")
    assert workflow_hash(f.folder) != before


def test_a_script_named_by_a_working_folder_input_is_scanned_and_left_to_the_input_check(tmp_path):
    f = _facts(tmp_path, _rule("python {input.script} {input.table} > {output}",
                               'script="scripts/fetch.py", table="data/in.csv"'),
               **{"workflows/wf/scripts/fetch.py": DOWNLOADER})
    assert [x.code for x in _findings(f)] == ["download"]  # hidden_input (ruleio) names the working-folder read


def _import_findings(f: WorkflowFacts):
    f.missing_packages, f.unimportable = look_up(f.manifest, f.source, Path(f.folder))
    return package_findings(f)


@pytest.mark.parametrize("snakefile", [_rule("python {workflow.basedir}/scripts/fit.py {input} > {output}"),
                                       'rule fetch:\n    output: "out.csv"\n    script: "scripts/fit.py"\n'])
def test_a_script_importing_a_package_neither_installed_nor_declared_is_named(tmp_path, snakefile):
    f = _facts(tmp_path, snakefile, **{"workflows/wf/scripts/fit.py": "import os\nimport snakegate_absent_pkg.fit\n"
                                                                      "from helpers import x\n",
                                       "workflows/wf/scripts/helpers.py": "x = 1\n"})
    (undeclared,) = _import_findings(f)
    assert undeclared.code == "import_undeclared" and (undeclared.file, undeclared.line) == (
        "workflows/wf/scripts/fit.py", 2)
    assert undeclared.message.startswith("workflows/wf/scripts/fit.py imports `snakegate_absent_pkg`") and \
        "its job would fail (ModuleNotFoundError) after the gate accepted the run" in undeclared.message


def test_a_script_whose_rule_brings_its_own_conda_environment_is_not_held_to_this_ones_packages(tmp_path):
    f = _facts(tmp_path, 'rule fit:\n    output: "out.csv"\n    conda: "envs/fit.yaml"\n    script: "scripts/fit.py"\n',
               **{"workflows/wf/scripts/fit.py": "import snakegate_absent_pkg\n",
                  "workflows/wf/envs/fit.yaml": "dependencies: [snakegate_absent_pkg]\n"})
    assert _import_findings(f) == []
