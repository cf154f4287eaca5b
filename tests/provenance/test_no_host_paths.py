"""With `[provenance] record_hostname = false` (snakegate.toml; snakegate/registry/settings.py) a run's records
keep this machine out (issue 28 §3): no absolute path of the host (the registry's folder, the home folder, the
Python environment) and no host name in run.json, prov.json or prov.ttl, for a run that succeeded and one that
failed (whose error and failure name its log).

No session fixture runs under this setting, so this module makes its own registry and two runs, once.
"""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

import pytest

from prov_runs import SECRET, TINY_FAIL
from registry_copies import make_registry, new_run, run_names, snakegate
from snakegate.provenance.document import ensure_rendering

RECORDS = ("run.json", "prov.json", "prov.ttl")


@pytest.fixture(scope="module")
def private_runs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = make_registry(tmp_path_factory.mktemp("private") / "registry", {"tiny-fail": TINY_FAIL}, with_git=True)
    (root / "snakegate.toml").write_text("[provenance]\nrecord_hostname = false\n")
    (root / "fail.yaml").write_text(f"workflow: tiny-fail\nparams:\n  token: {SECRET}\n")
    runs = {}
    for kind, config, code in (("succeeded", "workflows/tabular-profile/examples/basic.yaml", 0),
                               ("failed", "fail.yaml", 1)):
        before = run_names(root)
        proc = snakegate(root, "run", config)
        assert proc.returncode == code, proc.stdout + proc.stderr
        runs[kind] = new_run(root, before)
    return root, runs


def _text(run_dir: Path, record: str) -> str:
    """A record's text; prov.ttl is made from prov.json when first asked for (snakegate prov, a query, export)."""
    return (ensure_rendering(run_dir, record) if record == "prov.ttl" else run_dir / record).read_text()


def host_paths(root: Path) -> list[str]:
    """Absolute paths that name this machine's folders: the registry, the home folder, Python's environment."""
    paths = {str(root), str(root.resolve()), str(Path.home()) + "/", sys.prefix + "/", sys.base_prefix + "/",
             str(Path(sys.executable).parent) + "/"}
    return sorted(p for p in paths if len(p) > 2)


@pytest.mark.parametrize("kind", ["succeeded", "failed"])
@pytest.mark.parametrize("record", RECORDS)
def test_no_absolute_host_path_is_in_the_record(kind, record, private_runs):
    root, runs = private_runs
    text = _text(runs[kind], record)
    found = {p for p in host_paths(root) if p in text}
    assert found == set(), f"{record} of the {kind} run names {sorted(found)}"


@pytest.mark.parametrize("kind", ["succeeded", "failed"])
@pytest.mark.parametrize("record", RECORDS)
def test_no_host_name_is_in_the_record(kind, record, private_runs):
    _, runs = private_runs
    text = _text(runs[kind], record)
    assert "sg:hostname" not in text and "ns#hostname" not in text
    host = socket.gethostname()
    if len(host) >= 4:  # a short name (`vm`) is a word any text can hold
        assert not re.search(rf"\b{re.escape(host)}\b", text), f"{record} names the host {host}"


def test_the_failed_run_still_names_its_log_relative_to_the_registry(private_runs):
    _, runs = private_runs
    record = json.loads((runs["failed"] / "run.json").read_text())
    assert record["status"] == "failed" and record["failed_rule"] == "explode"
    log = record["failure"]["log"]
    assert not Path(log).is_absolute() and log.endswith("explode.log")
