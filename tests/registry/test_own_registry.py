"""A registry of your own, with snakegate installed from a wheel and no checkout anywhere a process looks.

Once for the module: the wheel is built from a copy of this checkout and installed into a fresh virtual
environment (tests/wheel_install.py); `snakegate new` makes a registry outside the checkout, and a workflow
is added to it as a lab would (tabular-profile's folder copied in, its table into data/). Every command is
the installed console script or the environment's Python, run from the registry root with no PYTHONPATH.
The Slurm test uses the one-node test cluster (tests/slurm_cluster.py) and is skipped, with the reason,
where it cannot start. Select the module with `-m wheel`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import slurm_cluster
import wheel_install
from registry_copies import REPO

pytestmark = pytest.mark.wheel

EXAMPLE = "workflows/tabular-profile/examples/basic.yaml"
RUN_LIMIT_S = 240


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return wheel_install.build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> wheel_install.Installed:
    return wheel_install.install(wheel, tmp_path_factory.mktemp("env") / "venv")


@pytest.fixture(scope="module")
def registry(installed, tmp_path_factory) -> Path:
    """`snakegate new lab`, then tabular-profile added as a contribution and its table put in data/."""
    root = tmp_path_factory.mktemp("home") / "lab"
    made = installed.run([installed.snakegate, "new", str(root)], cwd=root.parent)
    assert made.returncode == 0, made.stderr
    shutil.copytree(REPO / "workflows" / "tabular-profile", root / "workflows" / "tabular-profile",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "data" / "examples").mkdir()
    shutil.copy(REPO / "data" / "examples" / "tabular-penguins.csv", root / "data" / "examples")
    return root


def sg(installed, root: Path, *args: str, timeout: float = RUN_LIMIT_S, **env) -> subprocess.CompletedProcess:
    return installed.run([installed.snakegate, *args], cwd=root, timeout=timeout, **env)


def runs(root: Path) -> list[Path]:
    return sorted(p for p in (root / "runs").iterdir() if p.is_dir()) if (root / "runs").is_dir() else []


def test_the_wheel_ships_the_entry_the_registry_template_the_examples_and_the_data_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ["snakegate/entry/Snakefile", "snakegate/plan/composer.smk", "snakegate/provenance/snakegate.ttl",
                 "snakegate/schemas/artifact-types.json", "snakegate/schemas/artifact-type.schema.json",
                 "snakegate/schemas/workflow.schema.json", "snakegate/tui/chat.tcss",
                 "snakegate/views/templates/report.html.j2",
                 "snakegate/registry/template/Snakefile", "snakegate/registry/template/snakegate.toml",
                 "snakegate/registry/template/dot-github/workflows/registry.yml",
                 "snakegate/registry/template/profiles/slurm/config.yaml",
                 "snakegate/examples/workflows/CONTRIBUTING.md",
                 "snakegate/examples/workflows/tabular-profile/workflow.yaml",
                 "snakegate/examples/workflows/variant-calling/test/basic/config.yaml",
                 "snakegate/examples/data/tabular-penguins.csv"]:
        assert name in names, name
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n or "/.snakemake/" in n]
    # the links of the checkout are files in the wheel, byte for byte the repository's own
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("snakegate/registry/template/Snakefile") == (REPO / "Snakefile").read_bytes()
        assert (archive.read("snakegate/registry/template/profiles/slurm/config.yaml")
                == (REPO / "profiles" / "slurm" / "config.yaml").read_bytes())


def test_snakegate_new_makes_a_registry_that_imports_the_installed_snakegate_not_a_checkout(installed, registry):
    for name in ["snakegate.toml", "Snakefile", "README.md", ".gitignore", ".github/workflows/registry.yml",
                 "profiles/slurm/config.yaml", "workflows/CONTRIBUTING.md", "data/README.md"]:
        assert (registry / name).is_file(), name
    assert (registry / "Snakefile").read_text() == (REPO / "Snakefile").read_text()
    ci = (registry / ".github" / "workflows" / "registry.yml").read_text()
    assert "snakegate check --changed --base origin/main" in ci and "snakegate test --changed --base origin/main" in ci
    assert "@SNAKEGATE_VERSION@" not in ci and 'pip install "snakegate==0.1.0"' in ci
    package = installed.where_snakegate(registry)
    assert package.parent == installed.site_packages, package
    assert REPO not in package.parents


def test_an_installed_snakegate_checks_validates_and_runs_a_workflow_added_to_the_new_registry(installed, registry):
    listed = sg(installed, registry, "list")
    assert listed.returncode == 0 and "tabular-profile" in listed.stdout, listed.stderr
    check = sg(installed, registry, "check", "tabular-profile")
    assert check.returncode == 0, check.stdout + check.stderr
    valid = sg(installed, registry, "validate", EXAMPLE)
    assert valid.returncode == 0 and "passes the gate" in valid.stdout, valid.stdout + valid.stderr

    ran = sg(installed, registry, "run", EXAMPLE, "--cores", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = runs(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and record["verdict"]["status"] == "pass"
    # Snakemake ran the installed entry (snakegate run hands it the package's Snakefile, nothing of the registry)
    console = (run_dir / "console.log").read_text()
    assert f"Snakefile: {installed.site_packages / 'snakegate' / 'entry' / 'Snakefile'}" in console, console[:2000]
    verified = sg(installed, registry, "verify", run_dir.name)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_plain_snakemake_from_the_new_registry_root_runs_through_the_installed_gate(installed, registry):
    before = runs(registry)
    plain = installed.run([installed.python, "-m", "snakemake", "--configfile",
                           "workflows/tabular-profile/examples/fill-median.yaml", "--cores", "2"],
                          cwd=registry, timeout=RUN_LIMIT_S)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    (run_dir,) = [p for p in runs(registry) if p not in before]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded", record
    assert (run_dir / "results" / "profile.json").is_file()
    # and the gate is there: a config the contract refuses stops before any job
    bad = registry / "bad.yaml"
    bad.write_text("workflow: tabular-profile\nparams:\n  dataset_file: data/examples/tabular-penguins.csv\n"
                   "  missing_strategy: fill_mena\n")
    refused = installed.run([installed.python, "-m", "snakemake", "--configfile", str(bad), "--cores", "1"],
                            cwd=registry, timeout=RUN_LIMIT_S)
    assert refused.returncode != 0
    assert "fill_mena" in refused.stdout + refused.stderr
    assert len(runs(registry)) == len(before) + 1


def test_the_registry_types_in_snakegate_toml_are_the_ones_the_installed_snakegate_lists(installed, registry):
    settings = registry / "snakegate.toml"
    original = settings.read_text()
    settings.write_text(original + '\n[types.pdf]\ndescription = "A PDF document"\nextensions = [".pdf"]\n'
                                   'check = "magic"\nmagic = "25504446"\n')
    try:
        listed = sg(installed, registry, "types", "--json")
        assert listed.returncode == 0, listed.stderr
        types = json.loads(listed.stdout)
        assert types["pdf"]["source"] == "registry" and types["csv-table"]["source"] == "built-in"
    finally:
        settings.write_text(original)


def test_snakegate_new_with_examples_brings_the_curated_workflows_and_their_data(installed, tmp_path):
    root = tmp_path / "demo"
    made = installed.run([installed.snakegate, "new", str(root), "--with-examples"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    listed = sg(installed, root, "list", "--json")
    ids = [w["id"] for w in json.loads(listed.stdout)["workflows"]]
    assert ids == sorted(p.name for p in (REPO / "workflows").iterdir() if (p / "workflow.yaml").is_file())
    assert (root / "data" / "examples" / "tabular-penguins.csv").read_bytes() == \
        (REPO / "data" / "examples" / "tabular-penguins.csv").read_bytes()
    valid = sg(installed, root, "validate", "workflows/classifier-benchmark/examples/" +
               sorted(p.name for p in (root / "workflows" / "classifier-benchmark" / "examples").glob("*.yaml"))[0])
    assert valid.returncode == 0, valid.stdout + valid.stderr


@pytest.fixture(scope="module")
def cluster():
    reason = slurm_cluster.why_not_test()
    if reason:
        pytest.skip(reason)
    running = slurm_cluster.up()
    yield running
    running.stop()
    shutil.rmtree(running.dir, ignore_errors=True)


def test_the_new_registry_runs_on_slurm_with_the_profile_it_was_given(installed, registry, cluster):
    before = runs(registry)
    jobs_before = cluster.job_ids()
    env = {"SLURM_CONF": str(cluster.conf), "SNAKEGATE_SLURM_PARTITION": slurm_cluster.PARTITION}
    ran = installed.run(["timeout", "-k", "10", str(RUN_LIMIT_S), installed.snakegate, "run", EXAMPLE,
                         "--profile", "profiles/slurm"], cwd=registry, timeout=RUN_LIMIT_S + 30, **env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = [p for p in runs(registry) if p not in before]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    jobs = [j for j in cluster.jobs() if j["id"] not in jobs_before]
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in jobs) == ["clean", "load", "plot", "profile"], jobs
    assert all(j["state"] == "COMPLETED" for j in jobs), jobs


def test_the_readmes_main_job_runs_from_a_source_checkout_with_snakegate_installed_from_it(installed, tmp_path):
    """README's first command (`pip install . && snakegate run …` in the checkout): Snakemake, started in the
    checkout, imports the checkout's own snakegate/ while `snakegate run` handed it the installed entry; the
    entry still knows itself, so the run folder is the checkout's runs/, not one beside the installed entry."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("Snakefile", "snakegate.toml"):
        if (REPO / name).is_file():
            shutil.copy(REPO / name, checkout / name)
    shutil.copytree(REPO / "snakegate", checkout / "snakegate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workflows" / "tabular-profile", checkout / "workflows" / "tabular-profile",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (checkout / "data" / "examples").mkdir(parents=True)
    shutil.copy(REPO / "data" / "examples" / "tabular-penguins.csv", checkout / "data" / "examples")
    ran = sg(installed, checkout, "run", EXAMPLE, "--cores", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = runs(checkout)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert not (installed.site_packages / "snakegate" / "entry" / "runs").exists()
