"""`snakegate check --changed`: in a real git registry only the workflows a change touches are checked, the
skipped ones are named, a shared file re-checks them all; the whole-registry check gathers in parallel
processes and reports exactly what the serial check reports."""
import json
import os
import shutil
import signal
from pathlib import Path

import git
import pytest

from snakegate.check import check_workflows, select
from snakegate.check import parallel
from snakegate.check.changes import touched
from snakegate.registry.settings import settings_for
from snakegate.registry.workflows import Registry

BROKEN = Path(__file__).resolve().parents[1] / "fixtures" / "broken"
THREE = ("clean", "dynamic-access", "unused-param")


@pytest.fixture
def registry(tmp_path):
    """A committed git registry of three workflows (unused-param is broken on purpose)."""
    root = tmp_path / "registry"
    shutil.copytree(BROKEN / "data", root / "data")
    for name in THREE:
        shutil.copytree(BROKEN / "workflows" / name, root / "workflows" / name)
    (root / "snakegate.toml").write_text("# the registry's settings\n")
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "snakegate tests").set_value("user", "email", "tests@snakegate.invalid")
    repo.git.add(A=True)
    repo.index.commit("registry")
    return root


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# touched\n")


def test_changing_one_workflow_checks_only_it_and_names_the_two_skipped(registry, cli):
    touch(registry / "workflows" / "clean" / "Snakefile")
    code, out, err = cli("--registry", registry, "check", "--changed", "--no-hygiene")
    assert code == 0, out + err
    assert "skipped, unchanged since HEAD: dynamic-access, unused-param" in out
    assert "1 workflow(s) checked" in out
    code, out, err = cli("--registry", registry, "check", "--changed", "--no-hygiene", "--json")
    answer = json.loads(out)
    assert answer["workflows"] == ["clean"]
    assert answer["skipped"] == ["dynamic-access", "unused-param"] and answer["base"] == "HEAD"


def test_changed_compares_with_the_named_base_revision(registry, cli):
    repo = git.Repo(registry)
    base = repo.head.commit.hexsha
    touch(registry / "workflows" / "unused-param" / "Snakefile")
    repo.git.add(A=True)
    repo.index.commit("touch unused-param")
    code, out, err = cli("--registry", registry, "check", "--changed", "--no-hygiene", "--json")
    assert json.loads(out)["workflows"] == []  # nothing changed since HEAD
    code, out, err = cli("--registry", registry, "check", "--changed", "--base", base, "--no-hygiene", "--json")
    assert json.loads(out)["workflows"] == ["unused-param"]
    assert code == 1  # its unused param is found


def test_a_change_to_snakegate_toml_checks_every_workflow_and_says_why(registry, cli):
    # snakegate.toml holds the registry's artifact types and data roots: every contract may read them
    (registry / "snakegate.toml").write_text('[types.gtf]\ndescription = "GTF"\nextensions = [".gtf"]\ncheck = "columns"\ncolumns = 9\n')
    code, out, err = cli("--registry", registry, "check", "--changed", "--no-hygiene")
    assert "snakegate.toml changed since HEAD: every workflow is checked" in out
    assert "3 workflow(s) checked" in out


@pytest.mark.parametrize("path", ["snakegate.toml", "schemas/artifact.schema.json", "data/table.csv", "Snakefile",
                                  "workflows/_shared/rules.smk", "profiles/slurm/config.yaml", "something-new.py"])
def test_a_shared_or_unknown_file_outside_the_workflow_folders_touches_them_all(path):
    found = touched(["workflows/clean/Snakefile", path], "main")
    assert found.all and found.shared == path


@pytest.mark.parametrize("path", ["README.md", "docs/design.md", "workflows/CONTRIBUTING.md",
                                  ".github/workflows/registry.yml", "runs/r1/run.json", "plans/p.yaml"])
def test_files_no_workflow_check_reads_touch_nothing(path):
    found = touched([path, "workflows/clean/Snakefile"], "main")
    assert not found.all and found.ids == {"clean"}


def test_base_without_changed_is_a_usage_error_naming_the_fix(registry, cli):
    code, out, err = cli("--registry", registry, "check", "--base", "HEAD")
    assert code == 2 and "add --changed" in err and "Traceback" not in out + err


def test_jobs_must_be_a_positive_number(registry, cli):
    code, out, err = cli("--registry", registry, "check", "--jobs", "0")
    assert code == 2 and "at least 1 (got `0`)" in err


def test_the_parallel_check_reports_exactly_what_the_serial_check_reports(registry):
    settings = settings_for(str(registry))
    folders = select(registry, [])
    serial = check_workflows(folders, Registry.load(registry), settings, hygiene=False, jobs=1)
    together = check_workflows(folders, Registry.load(registry), settings, hygiene=False, jobs=3)
    assert together.workflows == serial.workflows == list(THREE)
    assert together.as_json() == serial.as_json()
    assert not together.ok  # unused-param's finding is there in both


def test_a_worker_process_that_dies_fails_its_workflow_instead_of_dropping_it(registry, monkeypatch):
    real = parallel.gather

    def dies_on_clean(folder, *args, **kwargs):
        if folder.name == "clean":
            os.kill(os.getpid(), signal.SIGKILL)  # a real death of the forked worker
        return real(folder, *args, **kwargs)

    monkeypatch.setattr(parallel, "gather", dies_on_clean)
    settings = settings_for(str(registry))
    report = check_workflows(select(registry, []), Registry.load(registry), settings, hygiene=False, jobs=2)
    assert report.workflows == list(THREE) and not report.ok
    lost = [f for f in report.findings if f.workflow == "clean" and f.severity == "error"]
    assert lost and "worker process failed" in lost[0].message and "--jobs 1 clean" in lost[0].message
