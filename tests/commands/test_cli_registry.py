"""The registry commands (list, show, search, init, validate): exit codes, output shapes, settings.

Exit codes: 0 ok, 1 invalid (refused), 2 usage or environment error. A user
mistake is one message, never a traceback; the usage errors below run the real
console command in a fresh process to prove it.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from registry_copies import TABULAR_SCHEMA, TABULAR_VERSION
from snakegate.registry.settings import settings_for

PENGUINS = "data/examples/tabular-penguins.csv"
GOOD = f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n"
TABULAR_PARAMS = list(TABULAR_SCHEMA["properties"])


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def validate_json(cli, registry, config):
    code, out, err = cli("--registry", registry, "validate", "--json", config)
    return code, json.loads(out), err


# --- validate: exit codes and output --------------------------------------------------------------

def test_valid_config_exits_0_with_one_json_object(tmp_registry, tmp_path, cli):
    code, result, err = validate_json(cli, tmp_registry, write(tmp_path / "run.yaml", GOOD))
    assert code == 0, err
    assert result == {"ok": True, "invocation_id": result["invocation_id"], "workflow": "tabular-profile", "errors": []}
    assert len(result["invocation_id"]) == 64


def test_refused_config_exits_1_and_names_path_code_and_fix(tmp_registry, tmp_path, cli):
    config = write(tmp_path / "run.yaml", GOOD + "  missing_strategy: fill_mena\n")
    code, out, err = cli("--registry", tmp_registry, "validate", config)
    assert code == 1
    assert "params.missing_strategy [enum]" in out
    assert "fix: did you mean `fill_mean`?" in out


def test_unknown_flag_exits_2(cli, tmp_registry):
    code, out, err = cli("--registry", tmp_registry, "validate", "--jsn", "run.yaml")
    assert code == 2
    assert "unrecognized arguments: --jsn" in err


def test_missing_run_config_file_exits_2(tmp_registry, tmp_path, cli):
    code, out, err = cli("--registry", tmp_registry, "validate", tmp_path / "nope.yaml")
    assert code == 2
    assert "does not exist" in err and "snakegate init" in err


def test_no_registry_found_exits_2(tmp_path, cli, monkeypatch):
    if any((p / "workflows").is_dir() for p in (tmp_path, *tmp_path.parents)):
        pytest.skip("a workflows/ folder above the temporary directory makes it a registry")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("validate", write(tmp_path / "run.yaml", GOOD))
    assert code == 2
    assert "no registry found" in err and "--registry" in err


def test_help_documents_the_exit_codes(cli):
    code, out, err = cli("--help")
    assert code == 0
    assert "0 ok" in out and "1 invalid" in out and "2 usage" in out


USAGE_MISTAKES = {
    "unknown-flag": ["validate", "--bogus", "run.yaml"],
    "unknown-command": ["frobnicate"],
    "missing-run-config": ["validate", "no-such-run.yaml"],
    "run-config-is-a-folder": ["validate", "."],
    "registry-without-workflows": ["--registry", "/", "list"],
    "unknown-workflow-show": ["show", "tabular-profil"],
    "unknown-workflow-init": ["init", "no-such-workflow"],
    "refused-config": ["validate", "bad.yaml"],
    "refused-config-json": ["validate", "--json", "bad.yaml"],
    "binary-run-config": ["validate", "binary.yaml"],
    "search-without-match": ["search", "zzzqqq"],
}


@pytest.mark.parametrize("args", USAGE_MISTAKES.values(), ids=USAGE_MISTAKES.keys())
def test_no_user_mistake_prints_a_traceback(args, tmp_registry, snakegate_cmd):
    """Fresh process, the installed command: a mistake is a message and a non-zero exit."""
    write(tmp_registry / "bad.yaml", GOOD + "  columns: [nope]\n")
    (tmp_registry / "binary.yaml").write_bytes(b"\xff\xfe\x00binary")
    proc = subprocess.run([*snakegate_cmd, *args], capture_output=True, text=True, cwd=tmp_registry, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert (proc.stdout + proc.stderr).strip()


@pytest.mark.parametrize("settings_text", [
    "[paths\n", "[paths]\nruns = 5\n", "[paths]\ndata_roots = 5\n", "[paths]\ndata_roots = 'data'\n",
], ids=["not-toml", "runs-not-a-string", "data-roots-a-number", "data-roots-a-string"])
def test_bad_settings_file_is_a_usage_error_not_a_traceback(settings_text, tmp_registry, tmp_path, cli):
    write(tmp_registry / "snakegate.toml", settings_text)
    code, out, err = cli("--registry", tmp_registry, "validate", write(tmp_path / "run.yaml", GOOD))
    assert code == 2
    assert "snakegate.toml" in err


# --- list, show, search, init -----------------------------------------------------------------------

def test_list_shows_every_workflow_with_its_version(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "list")
    assert code == 0
    line = next(l for l in out.splitlines() if l.startswith("tabular-profile "))
    assert TABULAR_VERSION in line.split()


def test_list_json_holds_workflows_and_broken(tmp_registry, cli):
    broken = tmp_registry / "workflows" / "half-done"
    broken.mkdir()
    write(broken / "workflow.yaml", "id: half-done\n")
    code, out, err = cli("--registry", tmp_registry, "list", "--json")
    assert code == 0
    data = json.loads(out)
    assert [w["id"] for w in data["workflows"]] == ["tabular-profile"]
    assert "half-done" in data["broken"]  # a broken contribution is reported, never hides the others


def test_show_lists_every_parameter(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "show", "tabular-profile")
    assert code == 0
    for name in TABULAR_PARAMS:
        assert name in out
    assert "fill_median" in out  # allowed values are shown
    assert "results/profile.json" in out


def test_show_json_carries_manifest_and_contract(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "show", "tabular-profile", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["manifest"]["id"] == "tabular-profile"
    assert set(data["schema"]["properties"]) == set(TABULAR_PARAMS)


def test_show_unknown_workflow_exits_1_with_a_suggestion(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "show", "tabular-profil")
    assert code == 1
    assert "did you mean `tabular-profile`?" in err


def test_search_profile_ranks_tabular_profile_first(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "search", "profile")
    assert code == 0
    assert out.splitlines()[0].split()[0] == "tabular-profile"


def test_search_without_match_exits_1(registry_root, cli):
    code, out, err = cli("--registry", registry_root, "search", "zzzqqq")
    assert code == 1
    assert "snakegate list" in out


def test_init_writes_a_config_that_validates(tmp_registry, cli, monkeypatch):
    monkeypatch.chdir(tmp_registry)
    code, out, err = cli("init", "tabular-profile", "-o", "x.yaml")
    assert code == 0, err
    text = (tmp_registry / "x.yaml").read_text()
    assert "workflow: tabular-profile" in text
    code, out, err = cli("validate", "x.yaml")
    assert code == 0, out + err


def test_init_refuses_to_overwrite_an_existing_file(tmp_registry, cli, monkeypatch):
    monkeypatch.chdir(tmp_registry)
    target = write(tmp_registry / "x.yaml", "# my own notes\n")
    code, out, err = cli("init", "tabular-profile", "-o", "x.yaml")
    assert code == 2
    assert "already exists" in err
    assert target.read_text() == "# my own notes\n"


def test_init_does_not_write_through_a_dangling_symlink(tmp_registry, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_registry)
    (tmp_registry / "x.yaml").symlink_to(tmp_path / "target.yaml")
    code, out, err = cli("init", "tabular-profile", "-o", "x.yaml")
    assert code == 2
    assert not (tmp_path / "target.yaml").exists()


def test_init_without_output_prints_the_template(tmp_registry, cli):
    code, out, err = cli("--registry", tmp_registry, "init", "tabular-profile")
    assert code == 0
    assert out.startswith("# Run config for tabular-profile")
    for name in ("dataset_file", "missing_strategy", "drop_duplicates"):
        assert f"{name}:" in out
    assert "columns" in out  # the optional param without default is named in the header


# --- settings: snakegate.toml and the environment ---------------------------------------------------

def test_settings_file_data_roots_moves_the_allowed_folder(tmp_registry, tmp_path, cli):
    inputs = tmp_registry / "inputs"
    inputs.mkdir()
    (inputs / "penguins.csv").write_bytes((tmp_registry / PENGUINS).read_bytes())
    write(tmp_registry / "snakegate.toml", '[paths]\ndata_roots = ["inputs"]\n')

    code, result, _ = validate_json(cli, tmp_registry, write(tmp_path / "in.yaml", GOOD.replace(PENGUINS, "inputs/penguins.csv")))
    assert code == 0, result
    code, result, _ = validate_json(cli, tmp_registry, write(tmp_path / "out.yaml", GOOD))
    assert code == 1
    assert [(e["code"], e["path"]) for e in result["errors"]] == [("path_outside_roots", "params.dataset_file")]


def test_settings_file_runs_sets_the_runs_folder(tmp_registry):
    assert settings_for(tmp_registry).runs_dir == tmp_registry / "runs"  # the default
    write(tmp_registry / "snakegate.toml", '[paths]\nruns = "../all-runs"\n')
    assert settings_for(tmp_registry).runs_dir == tmp_registry.parent / "all-runs"


def test_data_roots_environment_overrides_the_settings_file(tmp_registry, tmp_path, cli, monkeypatch):
    elsewhere = tmp_path / "shared-data"
    elsewhere.mkdir()
    (elsewhere / "penguins.csv").write_bytes((tmp_registry / PENGUINS).read_bytes())
    write(tmp_registry / "snakegate.toml", '[paths]\ndata_roots = ["data"]\n')
    config = write(tmp_path / "run.yaml", GOOD.replace(PENGUINS, str(elsewhere / "penguins.csv")))

    code, result, _ = validate_json(cli, tmp_registry, config)
    assert code == 1 and result["errors"][0]["code"] == "path_outside_roots"

    monkeypatch.setenv("SNAKEGATE_DATA_ROOTS", f"{elsewhere}{os.pathsep}data")
    code, result, _ = validate_json(cli, tmp_registry, config)
    assert code == 0, result
    assert settings_for(tmp_registry).data_roots == (elsewhere, tmp_registry / "data")


def test_runs_environment_overrides_the_settings_file(tmp_registry, tmp_path, monkeypatch):
    write(tmp_registry / "snakegate.toml", '[paths]\nruns = "from-file"\n')
    monkeypatch.setenv("SNAKEGATE_RUNS", str(tmp_path / "from-env"))
    assert settings_for(tmp_registry).runs_dir == tmp_path / "from-env"
    monkeypatch.setenv("SNAKEGATE_RUNS", "relative-runs")  # relative: against the registry root
    assert settings_for(tmp_registry).runs_dir == tmp_registry / "relative-runs"
