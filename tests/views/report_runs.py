"""Run kinds the provenance fixtures (prov_runs.py) do not make, in the same throw-away registry:

- chat: tabular-profile started through the runner as the chat's controller starts it, with the origin
  (model, backend, approver) the controller records;
- mcp: the same as the MCP server's execute tool starts it (backend "mcp", the client as the model);
- incomplete: plain `snakemake --until wf_clean`, so declared outputs are missing;
- interrupted: `snakegate run` and its Snakemake killed whole (SIGKILL to both process groups) mid-job;
- hostile: tabular-profile on a table whose header and cells hold HTML and script text;
- leaky: a workflow that writes its x-sensitive token into a text and a table output.

Session-scoped like prov_runs' fixtures; conftest.py imports them for the report tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prov_runs import SECRET
from registry_copies import clean_env, new_run, run_names
from run_faults import killed_mid_job

HOSTILE_COLUMN = '<img src=x onerror="console.error(1)">'
HOSTILE_CELL = "</td><script>console.error(2)</script>"  # short enough to be shown uncut

_START_WITH_ORIGIN = """
import json, sys
from pathlib import Path
from snakegate.provenance.origin import origin_fields
from snakegate.registry.workflows import Registry
from snakegate.config.read import read_run_config
from snakegate.run.runner import RunOptions, execute
from snakegate.registry.settings import load_settings
root = Path.cwd()
invocation, error = read_run_config(sys.argv[1])
assert error is None, error
origin = origin_fields(**json.loads(sys.argv[2]))
outcome = execute(Registry.load(root), load_settings(root), invocation, RunOptions(),
                  extra_record={"origin": origin})
print(outcome.run_id, outcome.status)
"""


def start_with_origin(root: Path, config: str, **origin) -> Path:
    """A run through the real runner with the origin record the chat or the MCP server passes."""
    before = run_names(root)
    proc = subprocess.run([sys.executable, "-c", _START_WITH_ORIGIN, config, json.dumps(origin)], cwd=root,
                          env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "succeeded" in proc.stdout, proc.stdout + proc.stderr
    return new_run(root, before)


@pytest.fixture(scope="session")
def chat_run(prov_registry) -> Path:
    return start_with_origin(prov_registry, "workflows/tabular-profile/examples/basic.yaml",
                             model="qwen2.5:7b", proposed_by_backend="openai-compatible", approved_by="Jane Doe",
                             approved_at="2026-01-31T10:00:00Z", conversation_id="c-42")


@pytest.fixture(scope="session")
def mcp_run(prov_registry) -> Path:
    return start_with_origin(prov_registry, "workflows/tabular-profile/examples/basic.yaml",
                             model="Claude Desktop 0.9", proposed_by_backend="mcp", approved_by="Jane Doe",
                             approved_at="2026-01-31T11:00:00Z")


@pytest.fixture(scope="session")
def incomplete_run(prov_registry) -> Path:
    before = run_names(prov_registry)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile",
                           "workflows/tabular-profile/examples/basic.yaml", "--config", "run_id=until-clean",
                           "--until", "wf_clean", "--cores", "1"],
                          cwd=prov_registry, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    run = new_run(prov_registry, before)
    assert json.loads((run / "run.json").read_text())["status"] == "incomplete"
    return run


@pytest.fixture(scope="session")
def hostile_run(prov_registry) -> Path:
    table = prov_registry / "data" / "examples" / "hostile.csv"
    rows = [f'species,"{HOSTILE_COLUMN.replace(chr(34), chr(34) * 2)}",year']
    rows += [f'"{HOSTILE_CELL}",{i * 1.5},{2007 + i % 3}' for i in range(8)]
    table.write_text("\n".join(rows) + "\n")
    config = prov_registry / "hostile.yaml"
    config.write_text("workflow: tabular-profile\nparams:\n  dataset_file: data/examples/hostile.csv\n"
                      f"  columns: [species, {json.dumps(HOSTILE_COLUMN)}]\n")
    before = run_names(prov_registry)
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "run", str(config)], cwd=prov_registry,
                          env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(prov_registry, before)


@pytest.fixture(scope="session")
def interrupted_run(prov_registry) -> Path:
    config = prov_registry / "slow-killed.yaml"
    config.write_text("workflow: slow-second\nparams:\n  table: data/examples/tabular-penguins.csv\n  sleep: 45\n")
    return killed_mid_job(prov_registry, config, "logs/wait.log", timeout=90)


@pytest.fixture(scope="session")
def leaky_run(prov_registry) -> Path:
    """prov_runs.LEAKY (in the registry from its first commit, so no run sees the registry's HEAD move)."""
    config = prov_registry / "leaky.yaml"
    config.write_text(f"workflow: leaky\nparams:\n  token: {SECRET}\n")
    before = run_names(prov_registry)
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "run", str(config)], cwd=prov_registry,
                          env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = new_run(prov_registry, before)
    assert SECRET in (run / "results" / "leak.txt").read_text()
    return run
