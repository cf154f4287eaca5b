"""What an exported crate carries for a reader who never opens prov.json (issue 28 §1), and `snakegate verify`
on the crate itself: every file it describes is hashed again, and an edited output is named.

The run is the session's succeeded tabular-profile run (prov_runs.py, a real `snakegate run` in a git registry).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from registry_copies import clean_env, git, snakegate


def export(registry: Path, run_dir: Path, dest: Path) -> dict[str, dict]:
    proc = snakegate(registry, "export", run_dir.name, "--ro-crate", dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {e["@id"]: e for e in json.loads((dest / "ro-crate-metadata.json").read_text())["@graph"]}


def verify(crate: Path) -> subprocess.CompletedProcess:
    """`snakegate verify CRATE` from a folder that is no registry: the crate stands alone."""
    return subprocess.run([sys.executable, "-m", "snakegate.cli", "verify", str(crate)], cwd=crate.parent,
                          env=clean_env(), capture_output=True, text=True, timeout=300)


def ids(value) -> list[str]:
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def test_the_crate_names_the_git_commit_and_the_software_with_their_versions(succeeded_run, prov_registry,
                                                                              tmp_path):
    graph = export(prov_registry, succeeded_run, tmp_path / "crate")
    commit = git(prov_registry, "rev-parse", "HEAD")
    (main,) = [e for e in graph.values() if "ComputationalWorkflow" in e["@type"]]
    snapshot = graph[main["isPartOf"]["@id"]]
    assert snapshot["version"] == commit and "SoftwareSourceCode" in snapshot["@type"]
    names = {e["name"]: e.get("softwareVersion") for e in graph.values() if e.get("@type") == "SoftwareApplication"}
    assert {"Snakemake", "snakegate", "Python"} <= set(names)
    assert all(names[n] not in (None, "unknown") for n in ("Snakemake", "snakegate", "Python"))
    (organize,) = [e for e in graph.values() if e.get("@type") == "OrganizeAction"]
    instruments = {graph[i]["name"] for i in ids(organize["instrument"])}
    assert {"Snakemake", "snakegate"} <= instruments


def test_verify_on_an_exported_crate_passes_and_names_an_edited_output(succeeded_run, prov_registry, tmp_path):
    crate = tmp_path / "crate"
    export(prov_registry, succeeded_run, crate)
    ok = verify(crate)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: crate"), ok.stdout + ok.stderr
    output = crate / "runs" / succeeded_run.name / "results" / "profile.json"
    output.write_text(output.read_text().replace("{", "{ ", 1))
    changed = verify(crate)
    assert changed.returncode != 0 and "Traceback" not in changed.stdout + changed.stderr
    assert changed.stdout.startswith("changed: crate") and "results/profile.json" in changed.stdout
