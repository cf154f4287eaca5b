"""`snakegate check` flags a free-text string param that reaches a `shell:` command without `:q`: an error for
the curated tier, a warning for community. The hole is real (plain Snakemake runs the injected command) and
the fix the finding names closes it.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import LABEL_PARAM, ROOT, clean_env, make_registry, one_rule_workflow
from snakegate.check.reading import read_workflow
from snakegate.check.shellquote import exposed_params, safe_pattern

UNQUOTED = "echo {params.label} > {output.note}"
QUOTED = "echo {params.label:q} > {output.note:q}"


def registry_with(tmp_path: Path, shell: str, label: dict | None = None, trust: str = "community") -> Path:
    files = one_rule_workflow("note", "Note", "Writes a note from a label.", shell, label=label)
    files["workflow.yaml"] = files["workflow.yaml"].replace("trust: community", f"trust: {trust}")
    return make_registry(tmp_path / "reg", {"note": files})


def check(root: Path) -> tuple[int, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "check", "note", "--json", "--no-hygiene"],
                          cwd=root, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "unquoted_shell_param"]


def test_curated_workflow_pasting_a_free_text_param_into_shell_fails_check_naming_rule_and_fix(tmp_path):
    rc, found = check(registry_with(tmp_path, UNQUOTED, trust="curated"))
    assert rc == 1
    [finding] = found
    assert finding["severity"] == "error" and finding["rule"] == "note"
    assert finding["file"] == "workflows/note/Snakefile" and finding["line"] == 6
    assert "`label`" in finding["message"] and "{params.label}" in finding["message"]
    assert "write `{params.label:q}`" in finding["hint"] and "`enum`" in finding["hint"]


def test_community_workflow_gets_the_same_finding_as_a_warning(tmp_path):
    rc, found = check(registry_with(tmp_path, UNQUOTED))
    assert [(f["severity"], f["rule"]) for f in found] == [("warning", "note")]
    assert "a warning for the community tier" in found[0]["message"]


@pytest.mark.parametrize("shell, label", [
    (QUOTED, None),
    (UNQUOTED, {"type": "string", "enum": ["note", "memo"], "default": "note", "description": "Kind of note."}),
    (UNQUOTED, {"type": "string", "pattern": "^[A-Za-z0-9_-]+$", "default": "note", "description": "A word."}),
    (UNQUOTED, {"type": "integer", "default": 1, "description": "A number."}),
])
def test_quoted_or_restricted_param_is_not_flagged(tmp_path, shell, label):
    assert check(registry_with(tmp_path, shell, label, trust="curated"))[1] == []


@pytest.mark.parametrize("pattern", ["[a-z]+", "^[^;]+$", "^.+$", "^[a-z ]+$", "^a$|;", r"^\S+$"])
def test_a_pattern_that_lets_shell_characters_through_is_not_restrictive(pattern):
    assert not safe_pattern(pattern)


@pytest.mark.parametrize("snakefile, how", [
    ('rule note:\n    output:\n        "n.txt",\n    shell:\n        "echo {config[label]} > {output}"\n',
     "{config[label]}"),
    ('rule note:\n    output:\n        "n.txt",\n    shell:\n        f"echo {config[\'label\']} > {{output}}"\n',
     "an f-string"),
    ('rule note:\n    output:\n        "n.txt",\n    params:\n        config["label"],\n    shell:\n'
     '        "echo {params} > {output}"\n', "{params}"),
    ('rule note:\n    output:\n        "n.txt",\n    params:\n        text=lambda wc: config["label"].upper(),\n'
     '    shell:\n        "echo {params.text} > {output}"\n', "{params.text}"),
])
def test_every_way_a_config_value_reaches_the_shell_text_is_found(tmp_path, snakefile, how):
    (tmp_path / "Snakefile").write_text(snakefile)
    schema = {"type": "object", "properties": {"label": LABEL_PARAM}}
    [exposure] = exposed_params(read_workflow(tmp_path).rules, schema)
    assert exposure.path == ("label",) and exposure.rule == "note" and exposure.how.startswith(how)


def test_every_curated_workflow_quotes_what_it_pastes_into_a_shell():
    for folder in sorted(p for p in (ROOT / "workflows").iterdir() if (p / "schema.json").is_file()):
        schema = json.loads((folder / "schema.json").read_text())
        assert exposed_params(read_workflow(folder, ROOT).rules, schema) == [], folder.name


@pytest.mark.parametrize("shell, runs_the_injected_command", [(UNQUOTED, True), (QUOTED, False)])
def test_an_unquoted_label_really_runs_a_command_and_the_quoted_one_does_not(tmp_path, shell,
                                                                            runs_the_injected_command):
    root = registry_with(tmp_path, shell)
    work = tmp_path / "work"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"label": "hello; touch pwned"}))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(root / "workflows" / "note" / "Snakefile"),
                           "--configfile", str(config), "-d", str(work), "--cores", "1", "--quiet"],
                          env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (work / "pwned").exists() is runs_the_injected_command
    note = (work / "results" / "note.txt").read_text()
    assert note == ("" if runs_the_injected_command else "hello; touch pwned\n")  # unquoted: touch wrote it
