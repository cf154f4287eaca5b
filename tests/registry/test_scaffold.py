"""`snakegate new`: a registry made from the shipped template, never over anything that is already there."""

from __future__ import annotations

from pathlib import Path

from registry_copies import REPO


def test_new_writes_the_registry_files_and_the_new_folder_is_a_registry(tmp_path, cli):
    code, out, err = cli("new", tmp_path / "lab")
    assert code == 0, err
    root = tmp_path / "lab"
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert written == [".github/workflows/registry.yml", ".gitignore", "README.md", "Snakefile",
                       "data/README.md", "profiles/slurm/config.yaml", "snakegate.toml",
                       "workflows/CONTRIBUTING.md"]
    assert "made a registry in" in out and "snakegate draft" in out
    code, out, err = cli("--registry", root, "list")
    assert code == 0 and "no workflows" in out, err
    # the repository is a registry like any other: the same entry Snakefile, the same Slurm profile
    assert (root / "Snakefile").read_bytes() == (REPO / "Snakefile").read_bytes()
    assert (root / "profiles/slurm/config.yaml").read_bytes() == (REPO / "profiles/slurm/config.yaml").read_bytes()
    assert "/runs/" in (root / ".gitignore").read_text().splitlines()


def test_new_takes_an_empty_folder_that_already_exists(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    code, _out, err = cli("new", tmp_path / "empty")
    assert code == 0, err
    assert (tmp_path / "empty" / "snakegate.toml").is_file()


def test_new_refuses_a_folder_that_holds_anything_and_writes_nothing(tmp_path, cli):
    root = tmp_path / "mine"
    root.mkdir()
    (root / "notes.txt").write_text("my notes\n")
    code, _out, err = cli("new", root)
    assert code == 2
    assert f"{root} already exists and is not an empty folder" in err and "name a new folder" in err
    assert [p.name for p in root.iterdir()] == ["notes.txt"]


def test_new_refuses_a_path_that_is_a_file(tmp_path, cli):
    target = tmp_path / "file"
    target.write_text("x")
    code, _out, err = cli("new", target)
    assert code == 2 and "not an empty folder" in err
    assert target.read_text() == "x"


def test_the_scaffolded_settings_file_loads_and_its_commented_types_are_valid_when_uncommented(tmp_path, cli):
    cli("new", tmp_path / "lab")
    settings = tmp_path / "lab" / "snakegate.toml"
    text = settings.read_text()
    # every commented example type, uncommented, is a valid [types] entry the registry then lists
    examples = "\n".join(line[2:] for line in text.splitlines()
                         if line.startswith("# [types.") or (line.startswith("# ") and " = " in line
                                                             and not line.startswith("# base_url")
                                                             and not line.startswith("# model")))
    settings.write_text(text + "\n" + examples + "\n")
    code, out, err = cli("--registry", tmp_path / "lab", "types")
    assert code == 0, err
    listed = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert listed["gtf"] == listed["pdf"] == listed["csv-latin1"] == "registry"
    assert listed["csv-table"] == "built-in"


def test_new_with_examples_copies_every_curated_workflow_and_the_demo_data(tmp_path, cli):
    code, out, err = cli("new", tmp_path / "demo", "--with-examples")
    assert code == 0, err
    root: Path = tmp_path / "demo"
    curated = sorted(p.name for p in (REPO / "workflows").iterdir() if (p / "workflow.yaml").is_file())
    assert sorted(p.name for p in (root / "workflows").iterdir() if p.is_dir()) == curated
    for wf_id in curated:
        assert wf_id in out
    demo = sorted(p.relative_to(REPO / "data" / "examples").as_posix()
                  for p in (REPO / "data" / "examples").rglob("*") if p.is_file())
    assert sorted(p.relative_to(root / "data" / "examples").as_posix()
                  for p in (root / "data" / "examples").rglob("*") if p.is_file()) == demo
    assert not list(root.rglob("__pycache__"))
