"""A run config refused for its size says what it really is: a file over the 8 MiB cap (its size and the cap), or
more values than a run config holds, written out without any YAML alias — never an "alias bomb" it is not.

`snakegate validate` in-process (`cli`), `snakegate run` and plain `snakemake --configfile` as real processes, on
real files in a throw-away registry whose one workflow takes any JSON value in `note`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from registry_copies import OPEN_NOTE, clean_env, make_registry, snakegate
from snakegate.config.read import MAX_BYTES
from snakegate.config.shape import MAX_VALUES
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

HEAD = "workflow: open-note\nparams:\n  note: ["


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return make_registry(tmp_path_factory.mktemp("sizes") / "registry", {"open-note": OPEN_NOTE})


def values_config(path, size: int):
    """A config of exactly `size` bytes: one list of zeros, written out (no anchor, no alias anywhere)."""
    count = (size - len(HEAD) - 3) // 3
    text = HEAD + "0, " * count + "0]\n"
    path.write_text(text + " " * (size - len(text)))
    assert path.stat().st_size == size and "&" not in text and "*" not in text
    return path


def refusal(cli, registry, config) -> dict:
    code, out, err = cli("--registry", registry, "validate", "--json", config)
    assert code == 1 and "Traceback" not in out + err, out + err
    [error] = json.loads(out)["errors"]
    return error


def no_runs(root) -> bool:
    return not (root / "runs").exists() or not any((root / "runs").iterdir())


def test_a_config_over_the_8_mib_cap_is_too_large_naming_its_size_and_the_cap(registry, tmp_path, cli):
    config = values_config(tmp_path / "big.yaml", MAX_BYTES + 1)
    error = refusal(cli, registry, config)
    assert error["code"] == "too_large", error
    assert f"{MAX_BYTES + 1:,} bytes" in error["message"] and f"{MAX_BYTES:,}-byte (8 MiB) cap" in error["message"]
    assert "alias" not in error["message"] and error["hint"]
    proc = snakegate(registry, "run", config, timeout=120)
    assert proc.returncode == 1 and "[too_large]" in proc.stdout + proc.stderr and no_runs(registry)


def test_an_8_mib_config_without_aliases_is_refused_for_its_values_not_as_an_alias_bomb(registry, tmp_path, cli):
    error = refusal(cli, registry, values_config(tmp_path / "at-the-cap.yaml", MAX_BYTES))
    assert error["code"] == "too_large", error
    assert f"more than {MAX_VALUES:,} values, all written out (no YAML aliases)" in error["message"], error
    assert "billion laughs" not in error["message"] and "expand" not in error["message"]


def test_a_config_that_never_ends_is_read_only_up_to_the_cap(registry, cli):
    error = refusal(cli, registry, "/dev/zero")
    assert error["code"] == "too_large" and f"more than {MAX_BYTES:,} bytes" in error["message"], error


def test_plain_snakemake_refuses_too_many_written_out_values_as_too_large_before_any_job(registry, tmp_path):
    config = values_config(tmp_path / "many.yaml", 3 * (MAX_VALUES + 50_000))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=registry, env=clean_env(), capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "[too_large]" in out and "no YAML aliases" in out, out[-3000:]
    assert "[yaml_bomb]" not in out and "Traceback" not in out and no_runs(registry)


def test_params_with_too_many_values_in_memory_are_too_large_and_shared_ones_still_a_bomb(registry):
    registry_, settings = Registry.load(registry), load_settings(registry)
    plain = gate(registry_, {"workflow": "open-note", "params": {"note": [0] * (MAX_VALUES + 1)}}, settings,
                 check_dag=False)
    assert [e.code for e in plain.errors] == ["too_large"] and "no YAML aliases" in plain.errors[0].message
    shared: list = ["lol"] * 9
    for _ in range(8):
        shared = [shared] * 9  # what Snakemake's loader hands over for an alias bomb: one list shared many times
    bomb = gate(registry_, {"workflow": "open-note", "params": {"note": shared}}, settings, check_dag=False)
    assert [e.code for e in bomb.errors] == ["yaml_bomb"]
