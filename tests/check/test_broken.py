"""`snakegate check`: each deliberately broken contribution in tests/fixtures/broken is caught
with the right code and rule, the curated registry passes, and --changed-since selects by git.

The fixture registry is checked once per module (one real Snakemake load per example);
the CLI runs as a subprocess so a traceback on stderr would be seen.
"""
import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import git
import pytest

from snakegate.check import CODES, ExampleFacts, WorkflowFacts, run_checks
from snakegate.check.pyscan import scan as scan_source
from snakegate.check.reading import read_workflow
from snakegate.gate.dag import Dag

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "fixtures" / "broken"
CURATED_PASSING = ["tabular-profile", "classifier-benchmark", "pl-power-series", "surrogate-design"]

# fixture folder -> (error codes it must produce, exactly; the rule named on its finding)
EXPECTED = {
    "undeclared-key": ({"undeclared_config_key"}, "head"),
    "unused-param": ({"unused_param"}, None),
    "hidden-input": ({"hidden_input"}, "head"),
    "hidden-missing": ({"hidden_input"}, "head"),
    "artifact-unconsumed": ({"artifact_not_consumed"}, "head"),
    "output-unproduced": ({"output_not_produced"}, None),
    "type-mismatch": ({"edge_type_mismatch"}, "tally"),
    "rule-undeclared": ({"rule_not_declared"}, "tally"),
    "io-name-unknown": ({"io_name_unknown"}, "head"),
    "example-invalid": ({"example_invalid"}, None),
    "syntax-error": ({"dag_error"}, None),
    "cyclic": ({"dag_error"}, None),
    "ambiguous": ({"dag_error"}, None),
    "bad-default": ({"default_invalid", "example_invalid"}, None),
    "bad-manifest": ({"manifest_invalid"}, None),
    "unvalidated": ({"config_not_validated"}, None),
}


def snakegate(*args, cwd=ROOT):
    exe = shutil.which("snakegate")
    cmd = [exe] if exe else [sys.executable, "-m", "snakegate.cli"]
    return subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def broken_report():
    proc = snakegate("--registry", BROKEN, "check", "--json")
    return proc, json.loads(proc.stdout)


def errors_of(report, workflow):
    return [f for f in report["findings"] if f["workflow"] == workflow and f["severity"] == "error"]


@pytest.mark.parametrize("workflow", sorted(EXPECTED))
def test_each_broken_contribution_is_caught_with_its_code_and_rule(broken_report, workflow):
    _, report = broken_report
    codes, rule = EXPECTED[workflow]
    found = errors_of(report, workflow)
    assert {f["code"] for f in found} == codes, found
    assert any(f["rule"] == rule for f in found), found
    for f in found:
        assert f["message"] and f["hint"], f


def test_the_fixture_template_itself_has_no_errors(broken_report):
    _, report = broken_report
    assert errors_of(report, "clean") == []


def test_broken_registry_fails_with_exit_1_and_no_traceback(broken_report):
    proc, report = broken_report
    assert proc.returncode == 1
    assert report["ok"] is False
    assert "Traceback" not in proc.stdout + proc.stderr


def test_json_output_has_the_documented_shape(broken_report):
    _, report = broken_report
    assert set(report) >= {"ok", "findings"}
    assert report["findings"]
    for f in report["findings"]:
        assert set(f) == {"severity", "workflow", "code", "rule", "file", "line", "message", "hint"}
        assert f["severity"] in ("error", "warning")
        assert f["code"] in CODES
        assert f["line"] is None or isinstance(f["line"], int)


def test_findings_point_at_the_snakefile_line(broken_report):
    _, report = broken_report
    (undeclared,) = errors_of(report, "undeclared-key")
    assert undeclared["file"] == "workflows/undeclared-key/Snakefile"
    line = (BROKEN / undeclared["file"]).read_text().splitlines()[undeclared["line"] - 1]
    assert 'config["threshold"]' in line
    (syntax,) = errors_of(report, "syntax-error")
    assert syntax["line"] == 27 and "shell" in syntax["message"]
    (undeclared_rule,) = errors_of(report, "rule-undeclared")
    assert (BROKEN / undeclared_rule["file"]).read_text().splitlines()[undeclared_rule["line"] - 1] == "rule tally:"


def test_hidden_input_names_the_hard_coded_file(broken_report):
    _, report = broken_report
    (hidden,) = errors_of(report, "hidden-input")
    assert "data/lookup.csv" in hidden["message"]
    (missing,) = errors_of(report, "hidden-missing")
    assert "reference/genome.fa" in missing["message"]


def test_cyclic_and_ambiguous_rules_are_clean_dag_errors(broken_report):
    _, report = broken_report
    (cyclic,) = errors_of(report, "cyclic")
    assert "Cyclic dependency" in cyclic["message"]
    (ambiguous,) = errors_of(report, "ambiguous")
    assert "ambiguous" in ambiguous["message"]


def test_dynamic_config_access_alone_is_a_warning_and_exit_0():
    proc = snakegate("--registry", BROKEN, "check", "dynamic-access", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["ok"] is True
    dynamic = [f for f in report["findings"] if f["code"] == "dynamic_config_access"]
    assert dynamic and all(f["severity"] == "warning" for f in dynamic)
    assert dynamic[0]["rule"] == "head" and dynamic[0]["line"] == 20


def test_human_output_groups_by_workflow_and_says_how_to_fix(cli):
    code, out, err = cli("--registry", BROKEN, "check", "unused-param", "type-mismatch", "--no-hygiene")
    assert code == 1
    assert "FAIL  type-mismatch" in out and "FAIL  unused-param" in out
    # in the order asked for, each workflow's findings under its own heading
    assert out.index("unused-param:") < out.index("[unused_param]") < out.index("type-mismatch:") \
        < out.index("[edge_type_mismatch]")
    assert "fix: pass it to the rule that needs it" in out
    assert "Traceback" not in out + err


def test_curated_registry_has_no_errors(cli):
    code, out, err = cli("check", *CURATED_PASSING, "--json")
    report = json.loads(out)
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    assert code == 0 and report["ok"] is True
    assert report["workflows"] == CURATED_PASSING


def test_unknown_workflow_id_is_a_clear_refusal(cli):
    code, out, err = cli("--registry", BROKEN, "check", "unused-parm")
    assert code == 1
    assert "did you mean `unused-param`?" in err
    assert "Traceback" not in out + err


# -- --changed-since in a real git repository -------------------------------------------------------


@pytest.fixture
def git_registry(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(BROKEN / "data", root / "data")
    for name in ("clean", "unused-param", "dynamic-access"):
        shutil.copytree(BROKEN / "workflows" / name, root / "workflows" / name)
    (root / "schemas").mkdir()
    (root / "schemas" / "README.md").write_text("meta-schemas\n")
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "snakegate tests").set_value("user", "email", "tests@snakegate.invalid")
    repo.git.add(A=True)
    repo.index.commit("registry")
    return root, repo


def test_changed_since_selects_only_the_changed_workflow(git_registry, cli):
    root, repo = git_registry
    snakefile = root / "workflows" / "unused-param" / "Snakefile"
    snakefile.write_text(snakefile.read_text() + "\n")
    code, out, err = cli("--registry", root, "check", "--changed-since", "HEAD", "--json", "--no-hygiene")
    report = json.loads(out)
    assert report["workflows"] == ["unused-param"]
    assert {f["workflow"] for f in report["findings"]} == {"unused-param"}
    assert code == 1  # unused-param is broken on purpose


def test_changed_since_counts_committed_and_untracked_changes(git_registry, cli):
    root, repo = git_registry
    base = repo.head.commit.hexsha
    example = root / "workflows" / "clean" / "examples" / "basic.yaml"
    example.write_text(example.read_text() + "# touched\n")
    repo.git.add(A=True)
    repo.index.commit("touch clean")
    (root / "workflows" / "dynamic-access" / "NOTES.md").write_text("new, untracked\n")
    code, out, err = cli("--registry", root, "check", "--changed-since", base, "--json", "--no-hygiene")
    assert json.loads(out)["workflows"] == ["clean", "dynamic-access"]
    assert code == 0


def test_a_change_under_schemas_checks_every_workflow(git_registry, cli):
    root, repo = git_registry
    (root / "schemas" / "README.md").write_text("changed\n")
    code, out, err = cli("--registry", root, "check", "--changed-since", "HEAD", "--json", "--no-hygiene")
    assert json.loads(out)["workflows"] == ["clean", "dynamic-access", "unused-param"]


def test_nothing_changed_checks_nothing_and_passes(git_registry, cli):
    root, _ = git_registry
    code, out, err = cli("--registry", root, "check", "--changed-since", "HEAD")
    assert code == 0 and "nothing to check" in out


def test_unknown_revision_is_a_usage_error_without_traceback(git_registry, cli):
    root, _ = git_registry
    code, out, err = cli("--registry", root, "check", "--changed-since", "no-such-branch")
    assert code == 2
    assert "cannot resolve `no-such-branch`" in err and "fetch-depth" in err
    assert "Traceback" not in out + err


# -- the pure parts ---------------------------------------------------------------------------------


def test_a_crashing_check_is_an_error_finding_not_silence():
    # an output declared as a bare string makes the IO check crash; that must fail the workflow
    facts = WorkflowFacts(id="w", folder="/nowhere/w", rel="workflows/w", manifest={"outputs": {"o": "oops"}},
                          schema={"properties": {}},
                          examples=[ExampleFacts(name="workflows/w/examples/e.yaml", resolved_params={},
                                                 dag=Dag(jobs=[], rules={}))])
    findings = run_checks(facts)
    crashed = [f for f in findings if "crashed" in f.message]
    assert crashed and all(f.severity == "error" for f in crashed)


def _scan(text, tmp_path, extra=None):
    for name, body in (extra or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    (tmp_path / "Snakefile").write_text(text)
    return read_workflow(tmp_path, tmp_path)


def test_config_reads_are_found_in_rules_lambdas_functions_and_shell_strings(tmp_path):
    scan = _scan('''def pick(wildcards):
    return config["model"]["kind"]


rule a:
    input:
        t=config["table"],
    output:
        "o.txt",
    params:
        c=lambda w: config.get("opts", {}).get("depth"),
    shell:
        "echo {config[label]} > {output}"
''', tmp_path)
    reads = {(r.path, r.rule, r.line) for r in scan.reads}
    assert reads == {(("model", "kind"), None, 2), (("table",), "a", 7), (("opts", "depth"), "a", 11),
                     (("label",), "a", 13)}
    assert scan.dynamic == []


def test_included_smk_files_are_followed_with_their_own_line_numbers(tmp_path):
    scan = _scan('include: "rules/extra.smk"\n', tmp_path,
                 {"rules/extra.smk": '\n\nrule b:\n    output:\n        "b.txt",\n    params:\n        x=config["x"],\n'
                                     '    shell:\n        "touch {output}"\n'})
    assert scan.files == ["Snakefile", "rules/extra.smk"]
    (read,) = scan.reads
    assert (read.path, read.file, read.line, read.rule) == (("x",), "rules/extra.smk", 7, "b")


def test_keys_held_in_constants_resolve_and_others_are_dynamic(tmp_path):
    scan = _scan('''KEY = "alpha"
for name in ["beta", "gamma"]:
    print(config[name])
print(config[KEY], config[input_key()], config["m"][wildcards_key])
run_all(**config)
''', tmp_path)
    assert sorted(r.path for r in scan.reads) == [("alpha",), ("beta",), ("gamma",)]
    assert sorted((d.prefix, d.whole) for d in scan.dynamic) == [((), False), ((), True), (("m",), False)]


def test_generated_script_calls_do_not_count_as_whole_config_use(tmp_path):
    scan = _scan('rule a:\n    output:\n        "o",\n    params:\n        k=config["k"],\n    script:\n        "s.py"\n',
                 tmp_path)
    assert [r.path for r in scan.reads] == [("k",)] and scan.dynamic == []


def test_scan_source_is_pure_on_a_plain_python_tree():
    result = scan_source(ast.parse('x = config["a"]["b"]\ny = "c" in config\n'), {}, "f.py")
    assert sorted(r.path for r in result.reads) == [("a", "b"), ("c",)]
