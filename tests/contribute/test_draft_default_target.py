"""`snakegate draft` takes the workflow's outputs from the rule Snakemake would build by default: the first
rule in parse order, with each `include:` read where it stands (issue 27 §2). A Snakefile starting with
`include: "rules/a.smk"` has that file's first rule as its default target, not the `rule all` below it.

Draft only reads the Snakefiles written here (no Snakemake run): pure and fast.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from snakegate.check.reading import read_workflow
from snakegate.contribute.draft import draft
from test_draft_evaluates import _workflow  # the upstream folder: a Snakefile, a LICENSE, the files named


def _outputs(tmp_path: Path, folder: Path) -> dict:
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(folder, root, "wf")
    return {k: v["path"] for k, v in yaml.safe_load((result.folder / "workflow.yaml").read_text())["outputs"].items()}


RULE_A = """
rule a:
    output: "results/a.txt"
    shell: "echo a > {output}"
"""
RULE_ALL = """
rule all:
    input: "results/a.txt", "results/b.txt"
rule b:
    output: "results/b.txt"
    shell: "echo b > {output}"
"""


def test_a_rule_in_a_file_included_on_the_first_line_is_not_the_default_target(tmp_path):
    folder = _workflow(tmp_path, 'include: "rules/a.smk"\n' + RULE_ALL, **{"rules/a.smk": RULE_A})
    assert [r.name for r in read_workflow(folder, folder).rules] == ["a", "all", "b"]
    assert _outputs(tmp_path, folder) == {"a": "results/a.txt", "b": "results/b.txt"}  # rule all's inputs


def test_nested_includes_are_read_where_each_stands(tmp_path):
    folder = _workflow(tmp_path, 'include: "rules/outer.smk"\n' + RULE_ALL, **{
        "rules/outer.smk": 'include: "inner.smk"\nrule outer:\n    output: "o.txt"\n    shell: "touch {output}"\n',
        "rules/inner.smk": 'rule inner:\n    output: "i.txt"\n    shell: "touch {output}"\n'})
    assert [r.name for r in read_workflow(folder, folder).rules] == ["inner", "outer", "all", "b"]


def test_a_default_target_marked_in_an_included_file_is_undone_as_snakemake_undoes_it(tmp_path):
    folder = _workflow(tmp_path, 'include: "rules/a.smk"\n' + RULE_ALL, **{
        "rules/a.smk": RULE_A.replace("rule a:\n", "rule a:\n    default_target: True\n")})
    assert _outputs(tmp_path, folder) == {"a": "results/a.txt", "b": "results/b.txt"}


def test_a_rule_marked_default_target_wins_over_the_parse_order(tmp_path):
    folder = _workflow(tmp_path, RULE_A + RULE_ALL.replace('rule all:\n', 'rule all:\n    default_target: True\n'))
    assert _outputs(tmp_path, folder) == {"a": "results/a.txt", "b": "results/b.txt"}


def test_a_snakefile_that_only_includes_its_rules_has_no_default_target_and_draft_says_so(tmp_path):
    folder = _workflow(tmp_path, 'include: "rules/a.smk"\ninclude: "rules/all.smk"\n',
                     **{"rules/a.smk": RULE_A, "rules/all.smk": RULE_ALL})
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(folder, root, "wf")
    assert yaml.safe_load((result.folder / "workflow.yaml").read_text())["outputs"] == {}
    (said,) = [u for u in result.unsure if "default target" in u]
    assert "Snakefile defines no rule of its own" in said and "builds nothing" in said


@pytest.mark.parametrize("snakefile, files", [
    ('include: "rules/a.smk"\n' + RULE_ALL, {"rules/a.smk": RULE_A}),
    (RULE_A + RULE_ALL, {}),
    ('include: "rules/a.smk"\ninclude: "rules/all.smk"\n', {"rules/a.smk": RULE_A, "rules/all.smk": RULE_ALL}),
])
def test_draft_picks_the_rule_snakemake_itself_builds_by_default(tmp_path, snakefile, files):
    """The real Snakemake, dry-run in the workflow's folder: the files it would make are draft's outputs."""
    folder = _workflow(tmp_path, snakefile, **files)
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-c1", "--quiet", "rules"], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    planned = {"a", "b"} & set(re.findall(r"^(\w+)\s+\d+$", done.stdout + done.stderr, re.M))
    drafted = _outputs(tmp_path, folder)
    assert {Path(p).stem for p in drafted.values()} == planned
