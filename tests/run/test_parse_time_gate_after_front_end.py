"""The Snakemake that `snakegate run` starts proves its invocation again at parse time, against what the front end
wrote into the run folder: a param, a staging record or a workflow copy changed after the front end's gate is
refused, and plain `snakemake` is gated in full.

The front end's part runs here in-process as `snakegate run` does it (runner.fill_run_folder: the run folder, the
copy, the staged inputs, the environment for Snakemake), and the parse-time gate is `prepare()` called as the
top-level Snakefile calls it, with that environment. No Snakemake is started.
"""

from __future__ import annotations

import atexit
import json
import os
import stat

import pytest
import yaml

from registry_copies import TABULAR, make_registry
from snakegate.gate.prove import gate
from snakegate.provenance import runstore
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import cluster, prepare, runner
from snakegate.run.entry import GateRefused
from snakegate.run.handshake import JOB_INVOCATION_ENV, JOB_RUN_ENV


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """A registry and the front end's gate of tabular-profile's basic example."""
    root = make_registry(tmp_path_factory.mktemp("parse-time") / "registry")
    settings, registry = load_settings(root), Registry.load(root)
    invocation = yaml.safe_load((TABULAR / "examples" / "basic.yaml").read_text())
    result = gate(registry, invocation, settings, check_dag=False)
    assert result.ok, result.errors
    return root, settings, registry, invocation, result


def _front_end(gated, run_id: str):
    """What `snakegate run` does before it starts Snakemake: the run folder and Snakemake's environment."""
    _root, settings, registry, _invocation, result = gated
    run_dir = settings.runs_dir / run_id
    run_dir.mkdir(parents=True)
    _wf, env = runner.fill_run_folder(registry, settings, result, run_id, run_dir, runner.RunOptions(), {},
                                      runstore.utc_now())
    return run_dir, env


@pytest.fixture
def parse_time_gate(gated, monkeypatch):
    """prepare() as the top-level Snakefile calls it, in an environment restored afterwards."""
    root = gated[0]
    for name in (JOB_RUN_ENV, JOB_INVOCATION_ENV, cluster.PARTITION_ENV):
        monkeypatch.setenv(name, os.environ.get(name, ""))

    def call(env: dict, run_dir=None, config: dict | None = None, configfile=None):
        for name in (runstore.LOCK_HELD_ENV, prepare.pinning.EXPECTED_ENV):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        configfile = configfile or run_dir / runstore.CONFIG_YAML
        if config is None:
            config = yaml.safe_load(configfile.read_text())
        return prepare.prepare(config, root, [str(configfile)], None)

    return call


def _rewrite_json(path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.chmod(0o644)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def test_snakegate_runs_snakemake_gates_exactly_what_the_front_end_wrote(gated, parse_time_gate):
    run_dir, env = _front_end(gated, "handed")
    ctx = parse_time_gate(env, run_dir)
    assert ctx.source == "snakegate run" and ctx.run_id == "handed"
    assert ctx.result.invocation_id == gated[4].invocation_id
    assert ctx.params["dataset_file"].startswith(str(run_dir / "inputs"))  # the staged copy, never the data root


def test_a_param_changed_after_the_front_ends_gate_is_proved_again_and_refused(gated, parse_time_gate):
    run_dir, env = _front_end(gated, "changed-param")
    config = yaml.safe_load((run_dir / runstore.CONFIG_YAML).read_text())
    config["params"]["drop_duplicates"] = not config["params"]["drop_duplicates"]
    with pytest.raises(GateRefused) as refused:
        parse_time_gate(env, run_dir, config)  # the config as Snakemake would load a rewritten config.yaml
    assert [e.code for e in refused.value.errors] == ["invocation_mismatch"]
    assert runstore.read_run(run_dir)["error_code"] == "invocation_mismatch"  # the run's record says why


def test_a_staging_record_pointing_at_other_bytes_is_proved_again_and_refused(gated, parse_time_gate):
    run_dir, env = _front_end(gated, "other-bytes")
    _rewrite_json(run_dir / runstore.INPUTS_JSON,
                  lambda data: data["inputs"]["params.dataset_file"].update(sha256="0" * 64))
    with pytest.raises(GateRefused) as refused:
        parse_time_gate(env, run_dir)
    assert [e.code for e in refused.value.errors] == ["invocation_mismatch"]


def test_a_workflow_copy_changed_after_the_gate_is_refused_though_the_records_are_intact(gated, parse_time_gate):
    run_dir, env = _front_end(gated, "copy-edited")
    snakefile = run_dir / "workflow" / "Snakefile"
    snakefile.parent.chmod(0o755)
    snakefile.chmod(stat.S_IRUSR | stat.S_IWUSR)
    snakefile.write_text(snakefile.read_text() + "\nshell('echo not gated')\n")
    with pytest.raises(GateRefused) as refused:
        parse_time_gate(env, run_dir)
    assert [e.code for e in refused.value.errors] == ["invocation_mismatch"]


def test_plain_snakemake_beside_a_front_ends_run_is_gated_in_full(gated, parse_time_gate):
    _front_end(gated, "plain-beside")
    plain_config = gated[0] / "plain.yaml"
    plain_config.write_text(yaml.safe_dump(gated[3]))
    # plain `snakemake --configfile plain.yaml`: no pinned invocation
    ctx = parse_time_gate({}, configfile=plain_config)
    try:
        assert ctx.source == "snakemake"
        assert ctx.run_id.startswith("plain-")
    finally:
        prepare._never_started(ctx)  # as at the exit of a Snakemake that never started a job
        atexit.unregister(prepare._never_started)
    assert not ctx.run_dir.exists()
