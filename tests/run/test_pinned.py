"""What runs is exactly what was gated: the invocation pinned from gate to job, the run's own
immutable workflow copy, gated inputs re-checked before `succeeded`, partial runs called
`incomplete`, the profile allow-list, and forks that check what they reuse.

Every test drives the real CLI and the real Snakemake as subprocesses in a throw-away registry.
Runs that must be changed "while they are going" wait, deterministically, on a marker file: the
`waits-for-go` workflow's first job waits for <gate_dir>/go, and `snakegate run`'s Snakemake child
can be held before it reads its config by a test-only sitecustomize (see `pause_hook`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from registry_copies import clean_env, make_registry, run_names, snakegate
from waits import (  # noqa: F401 - the waiting workflow, its fixtures and helpers
    PAUSE_HOOK, PENGUINS, WAITS_FOR_GO, _yaml_dump, _yaml_load, finish, gate_dir, only_run, plain_start, record_of,
    registry, sg_start, sha256, start, wait_for, waits_config)


# ---- 11.1 the invocation is pinned from gate to job ----------------------------------------------
def _drop_id_and_change_a_param(config: Path):
    data = _yaml_load(config)
    del data["invocation_id"]
    data["params"]["missing_strategy"] = "fill_mean"
    _yaml_dump(config, data)


def _change_a_param(config: Path):
    data = _yaml_load(config)
    data["params"]["drop_duplicates"] = False
    _yaml_dump(config, data)


def _point_the_run_elsewhere(config: Path):
    data = _yaml_load(config)
    data["run_id"] = "elsewhere"
    _yaml_dump(config, data)


def _override_with_a_duplicate_key(config: Path):
    # Snakemake's loader keeps the last of two keys: the strict re-read refuses the file
    config.write_text(config.read_text() + "workflow: tabular-profile\n")


@pytest.mark.parametrize("rewrite,code", [
    (_drop_id_and_change_a_param, "invocation_mismatch"), (_change_a_param, "invocation_mismatch"),
    (_point_the_run_elsewhere, "invocation_mismatch"), (_override_with_a_duplicate_key, "duplicate_key"),
], ids=["drop-invocation-id-and-change-a-param", "change-a-param", "change-run-id", "duplicate-key"])
def test_a_config_rewritten_between_the_gate_and_snakemake_is_refused_and_nothing_runs(registry, tmp_path,
                                                                                     rewrite, code):
    hook, pause = tmp_path / "hook", tmp_path / "pause"
    hook.mkdir()
    pause.mkdir()
    (hook / "sitecustomize.py").write_text(PAUSE_HOOK)
    env = clean_env(PYTHONPATH=str(hook), TEST_PAUSE_BEFORE_SNAKEMAKE=str(pause))
    proc = sg_start(registry, "run", "workflows/tabular-profile/examples/basic.yaml", env=env)
    try:
        wait_for(pause / "paused")  # gated, run folder written, Snakemake started and held before it reads
        run_dir = only_run(registry)
        rewrite(run_dir / "config.yaml")
    finally:
        (pause / "go").touch()
    out, err = finish(proc)
    assert proc.returncode == 1, out + err
    assert run_names(registry) == {run_dir.name}  # nothing ran anywhere else either
    record = record_of(run_dir)
    assert record["status"] == "failed" and record["error_code"] == code, record
    assert not record.get("jobs_executed")
    assert not (run_dir / "results").exists()
    assert code in out  # the one-line summary says why


def _pinned_config(tmp_path: Path, registry: Path) -> Path:
    """A run config that carries its invocation id, as `snakegate run` writes them."""
    config = _yaml_dump(tmp_path / "run.yaml", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}})
    proc = snakegate(registry, "validate", "--json", config)
    data = _yaml_load(config)
    data["invocation_id"] = json.loads(proc.stdout)["invocation_id"]
    return _yaml_dump(config, data)


def test_plain_snakemake_refuses_a_config_override_of_a_pinned_config(registry, tmp_path):
    config = _pinned_config(tmp_path, registry)
    proc = plain_start(registry, config, "--config",
                       f"params={{dataset_file: {PENGUINS}, missing_strategy: fill_mean}}")
    out, err = finish(proc)
    assert proc.returncode != 0 and "[invocation_mismatch]" in err, err
    assert run_names(registry) == set()


def test_plain_snakemake_refuses_an_extra_configfile_on_a_pinned_config(registry, tmp_path):
    config = _pinned_config(tmp_path, registry)
    extra = _yaml_dump(tmp_path / "extra.yaml", {"params": {"missing_strategy": "fill_mean"}})
    # Snakemake merges the second file over the first
    proc = start(registry, sys.executable, "-m", "snakemake", "--configfile", config, extra, "--cores", "1")
    out, err = finish(proc)
    assert proc.returncode != 0 and "[invocation_mismatch]" in err, err
    assert run_names(registry) == set()


def test_a_job_checks_its_config_against_the_heads_invocation_record(registry, tmp_path):
    """A cluster job re-reads the Snakefile with its own copy of the config; it trusts the run
    folder's invocation.json (written by the head), not the environment."""
    proc = snakegate(registry, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stderr
    run_dir = only_run(registry)
    changed = _yaml_load(run_dir / "config.yaml")
    changed["params"]["missing_strategy"] = "fill_mean"
    changed = _yaml_dump(tmp_path / "changed.yaml", changed)
    job = [sys.executable, "-m", "snakemake", "--mode", "remote", "--cores", "1", "--nolock", "--force",
           f"{run_dir.relative_to(registry)}/results/cleaned.csv", "--allowed-rules", "wf_clean"]
    env = clean_env()  # no pin in the environment: a job on another node may not have it
    refused = subprocess.run([*job, "--configfile", str(changed)], cwd=registry, env=env, capture_output=True,
                             text=True, timeout=300)
    assert refused.returncode != 0 and "[invocation_mismatch]" in refused.stderr, refused.stderr
    assert "invocation.json" not in refused.stderr or "pins invocation" in refused.stderr
    accepted = subprocess.run([*job, "--configfile", str(run_dir / "config.yaml")], cwd=registry, env=env,
                              capture_output=True, text=True, timeout=300)
    assert accepted.returncode == 0, accepted.stderr


# ---- one finished run, shared read-only (the workflow copy test) and by the fork tests (12.9) ----------
@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> tuple[Path, Path]:
    """One registry and one finished run, shared by the workflow-copy test and the fork tests (each leaves the
    parent as it was)."""
    root = make_registry(tmp_path_factory.mktemp("fork") / "registry")
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stderr
    return root, only_run(root)


# ---- 11.2 code cannot change under a run ----------------------------------------------------------
def test_editing_the_registry_workflow_during_a_run_neither_fails_nor_changes_it(registry, tmp_path, gate_dir):
    proc = sg_start(registry, "run", waits_config(tmp_path, gate_dir))
    try:
        wait_for(gate_dir / "started")  # the first job is running; the stamp job has not started
        folder = registry / "workflows" / "waits-for-go"
        (folder / "scripts" / "stamp.py").write_text('open(snakemake.output.stamped, "w").write("edited\\n")\n')
        with open(folder / "Snakefile", "a") as fh:
            fh.write("\nthis is not Snakemake (\n")
    finally:
        (gate_dir / "go").touch()
    out, err = finish(proc)
    assert proc.returncode == 0, out + err
    run_dir = only_run(registry)
    assert (run_dir / "results" / "stamp.txt").read_text() == "original\n"  # the gated script ran
    assert record_of(run_dir)["status"] == "succeeded"
    verify = snakegate(registry, "verify", run_dir.name)
    assert verify.returncode == 0, verify.stdout


def test_a_runs_workflow_copy_is_read_only_and_hashes_as_the_invocation_pins(parent):
    registry, run_dir = parent  # a finished `snakegate run` of the basic example (read here, not changed)
    copy = run_dir / "workflow"
    assert (copy / "Snakefile").read_bytes() == (registry / "workflows/tabular-profile/Snakefile").read_bytes()
    assert not (copy / "test").exists()
    assert all(not p.stat().st_mode & 0o222 for p in [copy, *copy.rglob("*")])
    from snakegate.provenance.hashing import workflow_hash
    pinned = json.loads((run_dir / "invocation.json").read_text())["invocation"]["workflow_hash"]
    assert workflow_hash(copy) == pinned == workflow_hash(registry / "workflows/tabular-profile")


def test_rerun_and_fork_work_from_the_run_record_after_the_registry_moved_on(tmp_path):
    root = make_registry(tmp_path / "registry")
    assert snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml").returncode == 0
    base = only_run(root)
    script = root / "workflows/tabular-profile/scripts/profile.py"
    script.write_text(script.read_text().replace("rows_out", "rows_left"))  # the registry's workflow changed

    rerun = snakegate(root, "rerun", base.name)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "reproduced: all 3 outputs are byte-identical" in rerun.stdout

    shutil.rmtree(root / "workflows/tabular-profile")  # and then left the registry
    again = snakegate(root, "rerun", base.name)
    assert again.returncode == 0 and "reproduced" in again.stdout, again.stdout + again.stderr
    fork = snakegate(root, "fork", base.name, "--set", "missing_strategy=fill_mean")
    assert fork.returncode == 0, fork.stdout + fork.stderr
    forked = max((root / "runs").iterdir(), key=lambda p: record_of(p).get("started", ""))
    assert record_of(forked)["parent_run"] == base.name and record_of(forked)["status"] == "succeeded"
    assert b"rows_left" not in (forked / "results/profile.json").read_bytes()  # the parent's code ran


# ---- 11.2 inputs cannot change under a run: tests/run/test_staging.py ---------------------------------


# ---- 12.7 succeeded means the declared outputs exist ----------------------------------------------
@pytest.mark.parametrize("option", [["--until", "wf_clean"], ["--omit-from", "wf_profile", "wf_plot"],
                                    ["runs/partial/results/cleaned.csv", "--allowed-rules", "wf_load", "wf_clean"]],
                         ids=["until", "omit-from", "target-and-allowed-rules"])
def test_plain_snakemake_building_less_than_the_outputs_is_recorded_incomplete(registry, tmp_path, option):
    config = _yaml_dump(tmp_path / "run.yaml", {"workflow": "tabular-profile", "run_id": "partial",
                                                "params": {"dataset_file": PENGUINS}})
    proc = plain_start(registry, config, *option)
    out, err = finish(proc)
    run_dir = registry / "runs" / "partial"
    record = record_of(run_dir)
    assert record["status"] == "incomplete", (record, err)
    assert sorted(record["missing_outputs"]) == ["runs/partial/results/profile.json",
                                                 "runs/partial/results/profile.png"]
    assert (run_dir / "results" / "cleaned.csv").is_file()


@pytest.mark.parametrize("option", [["-n"], ["--touch"]], ids=["dry-run", "touch"])
def test_plain_snakemake_that_runs_no_job_leaves_no_run_behind(registry, tmp_path, option):
    """A dry run plans, --touch only marks outputs current: neither is a run, so neither leaves a
    run folder (and --touch is refused before it touches anything)."""
    config = _yaml_dump(tmp_path / "run.yaml", {"workflow": "tabular-profile", "run_id": "nothing",
                                                "params": {"dataset_file": PENGUINS}})
    proc = plain_start(registry, config, *option)
    out, err = finish(proc)
    if option == ["--touch"]:
        assert proc.returncode != 0 and "--touch" in err and "without running any job" in err, err
    else:
        assert proc.returncode == 0, err
    assert run_names(registry) == set()


def _profile(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "profile"
    folder.mkdir()
    (folder / "config.yaml").write_text(textwrap.dedent(text))
    return folder


@pytest.mark.parametrize("text,key", [
    ("dryrun: true\n", "dryrun"), ("until: [wf_clean]\n", "until"), ("forcerun: [wf_load]\n", "forcerun"),
    ("config: {params: {missing_strategy: fill_mean}}\n", "config"), ("__use_yte__: true\njobs: 1\n", "__use_yte__"),
    ("latency-wait: 5\nexecutor: dryrun\n", "executor: dryrun"),
])
def test_snakegate_run_refuses_a_profile_setting_that_changes_what_is_built(registry, tmp_path, text, key):
    proc = snakegate(registry, "run", "workflows/tabular-profile/examples/basic.yaml",
                     "--profile", _profile(tmp_path, text))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"`{key}`" in proc.stderr and "refused" in proc.stderr
    assert run_names(registry) == set()


def test_the_profile_allow_list_refuses_every_option_that_changes_what_is_built_or_whether_it_runs():
    from snakegate.run.profiles import problems

    refused = ["dryrun", "dry-run", "dry_run", "until", "omit-from", "forcerun", "forceall", "forcerun",
               "allowed-rules", "target-jobs", "touch", "batch", "config", "configfile", "configfiles", "snakefile",
               "directory", "rerun-triggers", "rerun-incomplete", "keep-incomplete", "list-rules", "summary",
               "delete-all-output", "cleanup-metadata", "conda-create-envs-only", "workflow-profile", "quiet",
               "__use_yte__", "slurm-partition"]
    for key in refused:
        assert problems({key: True}, None), key  # a plugin's setting only with that executor
    allowed = {"executor": "slurm", "jobs": 4, "default_resources": {"mem_mb": 1}, "slurm-logdir": "logs",
               "retries": 1, "use-conda": True, "printshellcmds": True}
    assert problems(allowed, None) == []
    assert problems({"executor": "touch"}, None)


def test_snakegate_run_checks_the_profile_named_by_the_environment_too(registry, tmp_path):
    env = clean_env(SNAKEMAKE_PROFILE=str(_profile(tmp_path, "dryrun: true\n")))
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "run",
                           "workflows/tabular-profile/examples/basic.yaml"], cwd=registry, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "`dryrun`" in proc.stderr, proc.stderr
    assert run_names(registry) == set()


def test_snakegate_run_refuses_executors_that_run_no_job(registry):
    for executor in ("dryrun", "touch"):
        proc = snakegate(registry, "run", "workflows/tabular-profile/examples/basic.yaml", "--executor", executor)
        assert proc.returncode == 2 and f"--executor {executor} runs no job" in proc.stderr
    assert run_names(registry) == set()


def test_snakegate_run_passes_an_allowed_profile_and_ignores_a_workflow_profile(registry, tmp_path):
    profile = _profile(tmp_path, """\
        latency-wait: 3
        printshellcmds: true
        default-resources: {mem_mb: 100}
        set-threads: {wf_load: 1}
        """)
    # Snakemake would read profiles/default/ next to the Snakefile on its own; snakegate run never does
    (registry / "profiles" / "default").mkdir(parents=True)
    (registry / "profiles" / "default" / "config.yaml").write_text("dryrun: true\n")
    proc = snakegate(registry, "run", "workflows/tabular-profile/examples/basic.yaml", "--profile", profile)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = record_of(only_run(registry))
    assert record["status"] == "succeeded" and all(o["exists"] for o in record["outputs"])
    assert record["options"]["profile"] == str((profile / "config.yaml").resolve())


# ---- 12.9 fork checks what it reuses (the parent: the shared run above) ---------------------------------
def test_fork_refuses_when_a_parent_output_it_would_reuse_changed(parent):
    root, base = parent
    loaded = base / "results" / "loaded.csv"  # made by `load`, which a new missing_strategy leaves alone
    recorded, original = sha256(loaded), loaded.read_bytes()
    before = run_names(root)
    loaded.write_bytes(original.replace(b"Adelie", b"Adelle", 1))
    try:
        proc = snakegate(root, "fork", base.name, "--set", "missing_strategy=fill_mean")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        # the parent's record no longer proves itself (its seal): refused before anything is copied
        assert base.name in proc.stderr and "results/loaded.csv" in proc.stderr
        assert recorded[:12] in proc.stderr and sha256(loaded)[:12] in proc.stderr
        assert run_names(root) == before  # no fork folder left
    finally:
        loaded.write_bytes(original)


def test_fork_records_the_files_it_reused_with_their_hashes_and_jobs(parent):
    root, base = parent
    before = run_names(root)
    proc = snakegate(root, "fork", base.name, "--set", "missing_strategy=fill_mean")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [name] = run_names(root) - before
    fork = root / "runs" / name
    reused = {r["path"]: r for r in record_of(fork)["reused"]}
    assert set(reused) == {"results/loaded.csv", "logs/load.log"}  # clean, profile and plot re-ran
    assert reused["results/loaded.csv"]["rule"] == "load"
    assert reused["results/loaded.csv"]["sha256"] == sha256(base / "results/loaded.csv") \
        == sha256(fork / "results/loaded.csv")
    verify = snakegate(root, "verify", fork.name)
    assert verify.returncode == 0, verify.stdout
