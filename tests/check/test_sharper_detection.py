"""Issue 27 §2, sharper detection: what a script does behind its rule's back is named (hidden reads through
f-strings and Path.cwd(), a `snakemake.params` name the rule does not define, downloads done by libraries),
and what is no defect is not (a URL cited in a comment or a docstring; params read in a file that an
`include:` built from config names).

Pure: small workflows written here are read with the check's reader and their facts handed to the proofs.
"""
import json
import textwrap
from pathlib import Path

import pytest

from snakegate.check import CODES, WorkflowFacts
from snakegate.check.keys import config_key_findings
from snakegate.check.reading import read_workflow
from snakegate.check.scriptparams import CODE as PARAM_CODE
from snakegate.check.scriptparams import script_param_findings
from snakegate.check.unprovable import rule_findings, script_findings


def _facts(tmp_path: Path, snakefile: str, schema: dict | None = None, **files: str) -> WorkflowFacts:
    folder = tmp_path / "workflows" / "wf"
    folder.mkdir(parents=True)
    (folder / "Snakefile").write_text(textwrap.dedent(snakefile))
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(textwrap.dedent(text))
    return WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", root=str(tmp_path),
                         source=read_workflow(folder, tmp_path), schema=schema)


SCRIPT_RULE = """
rule plot:
    input: "data/x.csv"
    output: "plot.png"
    params: title="counts", dpi=100
    script: "scripts/plot.py"
"""


def _script(tmp_path, body: str, kind=script_findings):
    return kind(_facts(tmp_path, SCRIPT_RULE, **{"scripts/plot.py": body}))


@pytest.mark.parametrize("call", ["requests.get('https://example.org/data.csv')",
                                  "urllib.request.urlopen(snakemake.params.title)",
                                  "urlretrieve(URL, 'x.csv')",
                                  "pd.read_csv('https://example.org/table.csv')",
                                  "pd.read_csv(f'https://example.org/{snakemake.params.title}.csv')"])
def test_a_download_done_by_a_library_in_a_script_is_named_as_a_download(tmp_path, call):
    found = _script(tmp_path, f"import requests, urllib.request\nimport pandas as pd\nURL = 'x'\nt = {call}\n")
    downloads = [f for f in found if f.code == "download"]
    assert len(downloads) == 1, found
    assert downloads[0].message.startswith(f"workflows/wf/scripts/plot.py downloads with `{call}`")
    assert (downloads[0].rule, downloads[0].line, downloads[0].severity) == ("plot", 4, "warning")


def test_a_path_built_by_an_f_string_from_the_working_folder_is_a_hidden_read(tmp_path):
    found = _script(tmp_path, 'name = snakemake.params.title\nrows = open(f"data/{name}.csv").read()\n')
    (hidden,) = [f for f in found if f.code == "hardcoded_path"]
    assert "opens `f'data/{name}.csv'`, a path built relative to the working folder" in hidden.message
    assert hidden.line == 2


def test_an_f_string_built_on_a_path_the_rule_hands_over_is_not_reported(tmp_path):
    found = _script(tmp_path, 'out = snakemake.output[0]\nopen(f"{out}/part.txt", "w").write("x")\n'
                              'open(f"{snakemake.input[0]}.idx").read()\n')
    assert found == []


@pytest.mark.parametrize("call", ["Path.cwd()", "os.getcwd()", "pathlib.Path.cwd()"])
def test_a_script_taking_paths_from_the_working_folder_is_named(tmp_path, call):
    found = _script(tmp_path, f"import os, pathlib\nfrom pathlib import Path\nbase = {call}\n")
    (hidden,) = found
    assert hidden.code == "hardcoded_path" and f"takes paths from the working folder (`{call}`)" in hidden.message
    assert hidden.line == 3


@pytest.mark.parametrize("read", ["snakemake.params.titel", 'snakemake.params["titel"]',
                                  'snakemake.params.get("titel")'])
def test_a_python_script_reading_a_param_its_rule_does_not_define_is_an_error(tmp_path, read):
    (found,) = _script(tmp_path, f"t = snakemake.params.title\nx = {read}\n", kind=script_param_findings)
    assert found.code == PARAM_CODE and PARAM_CODE in CODES and found.severity == "error"
    assert found.message == ("workflows/wf/scripts/plot.py reads params `titel`, but rule `plot` defines no param "
                             "`titel` (its params: title, dpi), so the job fails when it reaches that line")
    assert found.hint.startswith("did you mean `title`?") and found.line == 2


def test_an_r_script_reading_a_param_its_rule_does_not_define_is_an_error(tmp_path):
    facts = _facts(tmp_path, SCRIPT_RULE.replace("scripts/plot.py", "scripts/plot.R"),
                   **{"scripts/plot.R": 'dpi <- snakemake@params[["dpi"]]\nt <- snakemake@params$main\n'})
    (found,) = script_param_findings(facts)
    assert "reads params `main`, but rule `plot` defines no param `main`" in found.message and found.line == 2


def test_a_script_reading_only_its_rules_params_is_not_reported(tmp_path):
    assert _script(tmp_path, "t = snakemake.params.title\nd = snakemake.params['dpi']\n",
                   kind=script_param_findings) == []


def test_a_url_in_a_scripts_docstring_is_a_citation_not_a_download(tmp_path):
    found = _script(tmp_path, '"""Method of Smith et al., https://doi.org/10.1000/xyz."""\n\n'
                              'def f():\n    """See https://example.org/method."""\n    return 1\n')
    assert found == []


def test_a_url_in_a_shell_comment_is_a_citation_but_one_in_the_command_is_a_download(tmp_path):
    facts = _facts(tmp_path, '''
        rule count:
            output: "n.txt"
            shell:
                """
                # counts as in https://doi.org/10.1000/xyz
                echo 3 > {output}  # see https://example.org/why
                """
        rule fetch:
            output: "x.csv"
            shell: "curl -o {output} https://example.org/x.csv"
        ''')
    found = rule_findings(facts)
    assert [(f.code, f.rule) for f in found] == [("download", "fetch")]


def test_params_read_in_a_file_an_include_built_from_config_names_are_used(tmp_path):
    schema = {"type": "object", "properties": {"mode": {"type": "string"}, "alpha": {"type": "number"},
                                               "beta": {"type": "number"}}}
    facts = _facts(tmp_path, '''
        include: f"rules/{config['mode']}.smk"
        ''', schema, **{"rules/fast.smk": 'rule a:\n    output: "a.txt"\n    params: a=config["alpha"]\n'
                                          '    shell: "echo {params.a} > {output}"\n',
                        "rules/slow.smk": 'rule b:\n    output: "b.txt"\n    params: b=config["beta"]\n'
                                          '    shell: "echo {params.b} > {output}"\n'})
    assert config_key_findings(facts) == []
    assert facts.source.pattern_includes == [("workflows/wf/Snakefile", 2, "rules/*.smk",
                                              ["workflows/wf/rules/fast.smk", "workflows/wf/rules/slow.smk"])]


def test_an_include_built_from_config_never_reads_outside_the_workflow_folder(tmp_path):
    (tmp_path / "elsewhere.smk").write_text('rule x:\n    output: "x"\n    params: x=config["gamma"]\n'
                                            '    shell: "touch {output}"\n')
    facts = _facts(tmp_path, 'include: "../../" + config["name"] + ".smk"\n',
                   {"type": "object", "properties": {"name": {"type": "string"}}})
    assert facts.source.files == ["workflows/wf/Snakefile"]
    (warning,) = [f for f in config_key_findings(facts) if f.code == "dynamic_config_access"]
    assert "an include path built from config matches no file (../../*.smk)" in warning.message


def test_an_include_of_a_whole_config_value_stays_unfollowed_and_said(tmp_path):
    facts = _facts(tmp_path, 'include: config["rules_file"]\n',
                   {"type": "object", "properties": {"rules_file": {"type": "string"}}})
    assert facts.source.unfollowed == [("workflows/wf/Snakefile", 1,
                                        "an include path that is not a literal string is not followed")]
    assert json.dumps(facts.source.pattern_includes) == "[]"


def test_a_rule_whose_params_come_from_a_mapping_is_not_held_to_names_it_cannot_list(tmp_path):
    facts = _facts(tmp_path, SCRIPT_RULE.replace('params: title="counts", dpi=100', 'params: **config["plot"]'),
                   **{"scripts/plot.py": "t = snakemake.params.title\n"})
    assert script_param_findings(facts) == []


def test_a_modules_rule_is_not_held_to_params_a_use_rule_with_may_add(tmp_path):
    facts = _facts(tmp_path, '''
        module plots:
            snakefile: "plots/Snakefile"
            config: config
        use rule plot from plots as plots_plot with:
            params: extra="x"
        ''', **{"plots/Snakefile": SCRIPT_RULE, "plots/scripts/plot.py": "e = snakemake.params.extra\n"})
    assert [s.rule for s in facts.source.scripts] == ["plot"]  # the module's script is read
    assert script_param_findings(facts) == []
