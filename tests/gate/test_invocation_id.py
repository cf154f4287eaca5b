"""The invocation id pins exactly what would run: the workflow folder's bytes, the inputs' bytes and the
resolved params; and nothing else (key order, defaults written out or not, the current directory,
where the checkout lives, which process computed it).
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from registry_copies import ROOT, TABULAR_VERSION, copy_registry

PENGUINS = "data/examples/tabular-penguins.csv"
TABULAR_EXAMPLES = sorted((ROOT / "workflows" / "tabular-profile" / "examples").glob("*.yaml"))
ALL_EXAMPLES = sorted((ROOT / "workflows").glob("*/examples/*.yaml"))


def example_id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.stem}"


def validated_id(cli, *args) -> str:
    """`snakegate [OPTIONS] validate --json CONFIG` must pass; its invocation id. The last arg is CONFIG."""
    *options, config = args
    code, out, err = cli(*options, "validate", "--json", config)
    assert code == 0, out + err
    result = json.loads(out)
    assert result["ok"] is True and result["errors"] == []
    assert re.fullmatch(r"[0-9a-f]{64}", result["invocation_id"])
    return result["invocation_id"]


def id_of(cli, registry: Path, config: Path) -> str:
    return validated_id(cli, "--registry", registry, config)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_tabular_profile_has_examples():
    assert TABULAR_EXAMPLES, "workflows/tabular-profile/examples/*.yaml is empty"


@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=[example_id(p) for p in ALL_EXAMPLES])
def test_example_config_validates_with_the_same_id_twice(example, cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    first = validated_id(cli, example)
    assert validated_id(cli, example) == first


@pytest.mark.parametrize("example", TABULAR_EXAMPLES, ids=[example_id(p) for p in TABULAR_EXAMPLES])
def test_example_id_is_the_same_in_another_process_and_directory(example, cli, snakegate_cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    in_process = validated_id(cli, example)
    proc = subprocess.run([*snakegate_cmd, "--registry", str(ROOT), "validate", "--json", str(example)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["invocation_id"] == in_process


def flip_one_byte(path: Path) -> None:
    """Change exactly one byte, keeping the size: a letter's case in text, the low bit of the last byte otherwise."""
    data = bytearray(path.read_bytes())
    match = re.search(rb"[a-z]", bytes(data[:200]))
    if match and b"\x00" not in data[:200]:
        data[match.start()] ^= 0x20
    else:
        data[-1] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("relpath", ["Snakefile", "SKILL.md", "scripts/clean.py", "examples/basic.yaml"])
def test_changing_one_byte_of_the_workflow_folder_changes_the_id(tmp_registry, tmp_path, cli, relpath):
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    target = tmp_registry / "workflows" / "tabular-profile" / relpath
    original = target.read_bytes()
    before = id_of(cli, tmp_registry, config)

    flip_one_byte(target)
    assert id_of(cli, tmp_registry, config) != before

    target.write_bytes(original)
    assert id_of(cli, tmp_registry, config) == before


@pytest.mark.parametrize("relpath", ["test/basic/config.yaml", "test/basic/expected/results/profile.png"])
def test_changing_the_workflows_test_cases_keeps_the_id(tmp_registry, tmp_path, cli, relpath):
    """test/ holds `snakegate test`'s cases, which no run executes: the content hash leaves them out,
    so the copy a run executes (without test/) hashes the same as the registry folder."""
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    before = id_of(cli, tmp_registry, config)
    flip_one_byte(tmp_registry / "workflows" / "tabular-profile" / relpath)
    (tmp_registry / "workflows" / "tabular-profile" / "test" / "new-case.yaml").write_text("x: 1\n")
    assert id_of(cli, tmp_registry, config) == before


def test_adding_a_file_to_the_workflow_folder_changes_the_id(tmp_registry, tmp_path, cli):
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    before = id_of(cli, tmp_registry, config)
    (tmp_registry / "workflows" / "tabular-profile" / "scripts" / "helper.py").write_text("X = 1\n")
    assert id_of(cli, tmp_registry, config) != before


def test_changing_one_byte_of_the_input_file_changes_the_id(tmp_registry, tmp_path, cli):
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    table = tmp_registry / PENGUINS
    before = id_of(cli, tmp_registry, config)

    data = bytearray(table.read_bytes())
    digit = re.search(rb"\n[^\n]*?(\d)", bytes(data)).start(1)  # first digit of the first data row
    data[digit] = ord("1") if data[digit] != ord("1") else ord("2")
    table.write_bytes(bytes(data))

    assert id_of(cli, tmp_registry, config) != before


def test_reordering_yaml_keys_keeps_the_id(tmp_registry, tmp_path, cli):
    ordered = write(tmp_path / "a.yaml", (
        f"workflow: tabular-profile\nversion: {TABULAR_VERSION}\nparams:\n"
        f"  dataset_file: {PENGUINS}\n  missing_strategy: fill_median\n  drop_duplicates: false\n"
        "  columns: [species, body_mass_g]\n"))
    shuffled = write(tmp_path / "b.yaml", (
        "params:\n  columns: [species, body_mass_g]\n  drop_duplicates: false\n"
        f"  missing_strategy: fill_median\n  dataset_file: {PENGUINS}\nversion: {TABULAR_VERSION}\nworkflow: tabular-profile\n"))
    assert id_of(cli, tmp_registry, ordered) == id_of(cli, tmp_registry, shuffled)


def test_reordering_a_list_param_changes_the_id(tmp_registry, tmp_path, cli):
    """`columns` is ordered (it sets the column order), so its order is part of the invocation."""
    a = write(tmp_path / "a.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n  columns: [sex, species]\n")
    b = write(tmp_path / "b.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n  columns: [species, sex]\n")
    assert id_of(cli, tmp_registry, a) != id_of(cli, tmp_registry, b)


def test_writing_defaults_out_keeps_the_id(tmp_registry, tmp_path, cli):
    implicit = write(tmp_path / "a.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    explicit = write(tmp_path / "b.yaml", (
        f"workflow: tabular-profile\nversion: {TABULAR_VERSION}\nparams:\n  dataset_file: {PENGUINS}\n"
        "  missing_strategy: remove\n  drop_duplicates: true\n"))
    assert id_of(cli, tmp_registry, implicit) == id_of(cli, tmp_registry, explicit)


def test_changing_a_param_changes_the_id(tmp_registry, tmp_path, cli):
    a = write(tmp_path / "a.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    b = write(tmp_path / "b.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n  drop_duplicates: false\n")
    assert id_of(cli, tmp_registry, a) != id_of(cli, tmp_registry, b)


def test_absolute_and_relative_input_paths_give_the_same_id(tmp_registry, tmp_path, cli):
    relative = write(tmp_path / "a.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    absolute = write(tmp_path / "b.yaml",
                     f"workflow: tabular-profile\nparams:\n  dataset_file: {tmp_registry / PENGUINS}\n")
    assert id_of(cli, tmp_registry, relative) == id_of(cli, tmp_registry, absolute)


def test_same_invocation_from_another_directory_gives_the_same_id(tmp_registry, tmp_path, cli, monkeypatch):
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    ids = set()
    # found by walking up from the registry root and from deep inside it
    for cwd in (tmp_registry, tmp_registry / "workflows" / "tabular-profile" / "scripts"):
        monkeypatch.chdir(cwd)
        ids.add(validated_id(cli, config))
    # from outside any registry, named by flag and by environment
    monkeypatch.chdir(tmp_path)
    ids.add(validated_id(cli, "--registry", tmp_registry, config))
    monkeypatch.setenv("SNAKEGATE_REGISTRY", str(tmp_registry))
    ids.add(validated_id(cli, config))
    assert len(ids) == 1


def test_moving_the_registry_keeps_the_id(tmp_path, cli):
    """Input paths are pinned relative to the registry root, so a checkout elsewhere gates the same."""
    here = copy_registry(tmp_path / "here")
    there = copy_registry(tmp_path / "elsewhere" / "there")
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    assert id_of(cli, here, config) == id_of(cli, there, config)


def test_registry_flag_and_environment_select_the_registry(tmp_path, cli, monkeypatch):
    first = copy_registry(tmp_path / "first")
    second = copy_registry(tmp_path / "second")
    flip_one_byte(second / "workflows" / "tabular-profile" / "SKILL.md")  # same workflow, different bytes
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    monkeypatch.chdir(first)  # the registry found by walking up, unless told otherwise

    found = validated_id(cli, config)
    monkeypatch.setenv("SNAKEGATE_REGISTRY", str(second))
    by_env = validated_id(cli, config)
    by_flag = validated_id(cli, "--registry", first, config)  # the flag wins over the environment

    assert found == by_flag == id_of(cli, first, config)
    assert by_env == id_of(cli, second, config)
    assert by_env != found


def test_registry_without_workflows_folder_is_a_usage_error(tmp_path, cli, monkeypatch):
    config = write(tmp_path / "run.yaml", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n")
    monkeypatch.setenv("SNAKEGATE_REGISTRY", str(tmp_path))
    code, out, err = cli("validate", config)
    assert code == 2
    assert "SNAKEGATE_REGISTRY" in err and "workflows/" in err
