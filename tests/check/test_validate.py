"""Issue 11.3: a workflow's own Snakefile validates its config against its schema.json with
Snakemake's `snakemake.utils.validate`, standalone and when included as a module; real Snakemake runs."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CURATED = sorted(p.parent.name for p in (ROOT / "workflows").glob("*/workflow.yaml"))
TABLE = ROOT / "data" / "examples" / "tabular-penguins.csv"


def snakemake(*args, cwd):
    return subprocess.run([sys.executable, "-m", "snakemake", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_every_workflow_snakefile_calls_validate_on_its_schema():
    for wf in CURATED:
        text = (ROOT / "workflows" / wf / "Snakefile").read_text()
        assert 'validate(config, "schema.json")' in text, wf


def test_a_standalone_run_with_a_bad_param_stops_before_any_job(tmp_path):
    config = tmp_path / "params.yaml"
    config.write_text(f"dataset_file: {TABLE}\nmissing_strategy: fill_mena\n")
    proc = snakemake("-s", ROOT / "workflows/tabular-profile/Snakefile", "--configfile", config,
                     "-d", tmp_path / "out", "--cores", "1", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Error validating config file" in proc.stdout + proc.stderr and "fill_mena" in proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "results").exists()
    assert "Finished job" not in proc.stderr


def test_a_standalone_run_with_an_unknown_param_stops_before_any_job(tmp_path):
    config = tmp_path / "params.yaml"
    config.write_text(f"dataset_file: {TABLE}\nmissing_stratgy: remove\n")
    proc = snakemake("-s", ROOT / "workflows/tabular-profile/Snakefile", "--configfile", config,
                     "-d", tmp_path / "out", "--cores", "1", "-n", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Error validating config file" in proc.stdout + proc.stderr and "missing_stratgy" in proc.stdout + proc.stderr


@pytest.fixture
def module_wrapper(tmp_path):
    """A Snakefile elsewhere that includes tabular-profile as a module, as the top-level Snakefile does."""
    def make(params: dict):
        (tmp_path / "Snakefile").write_text(textwrap.dedent(f"""\
            module tabular:
                snakefile:
                    {str(ROOT / "workflows/tabular-profile/Snakefile")!r}
                config:
                    {params!r}


            use rule * from tabular as t_*
            """))
        return tmp_path / "Snakefile"
    return make


def test_validate_finds_schema_json_when_the_workflow_is_a_module(module_wrapper, tmp_path):
    snakefile = module_wrapper({"dataset_file": str(TABLE), "missing_strategy": "remove", "drop_duplicates": True})
    proc = snakemake("-s", snakefile, "-n", "--cores", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "t_clean" in proc.stdout + proc.stderr


def test_validate_refuses_bad_params_when_the_workflow_is_a_module(module_wrapper, tmp_path):
    snakefile = module_wrapper({"dataset_file": str(TABLE), "missing_strategy": "fill_mena"})
    proc = snakemake("-s", snakefile, "-n", "--cores", "1", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Error validating config file" in proc.stdout + proc.stderr and "fill_mena" in proc.stdout + proc.stderr
