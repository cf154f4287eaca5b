"""True after the registry moves on (issue 28 §3): a rerun of an old run executes that run's pinned copy of the
workflow, and its record names the snapshot the copy came from (git commit and the workflow folder's tree,
runs/<id>/source.json), the run it came through, and the registry's current commit beside it.

A real git registry, a real run, a real commit that changes the workflow, a real `snakegate rerun`.
"""

from __future__ import annotations

import json

from prov_iris import run_ident
from prov_runs import val
from registry_copies import git, make_registry, new_run, run_names, snakegate


def head(root, spec: str = "HEAD") -> str:
    return git(root, "rev-parse", spec)


def test_a_rerun_after_the_registry_moved_on_names_the_pinned_snapshot_and_the_current_one(tmp_path):
    root = make_registry(tmp_path / "registry", with_git=True)
    before = run_names(root)
    assert snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml").returncode == 0
    first = new_run(root, before)
    pinned, tree = head(root), head(root, "HEAD:workflows/tabular-profile")
    # the registry moves on: the workflow's code changes in a new commit
    snakefile = root / "workflows" / "tabular-profile" / "Snakefile"
    snakefile.write_text(snakefile.read_text() + "\n# changed after the first run\n")
    git(root, "commit", "-q", "-am", "the workflow changed")
    moved = head(root)
    assert moved != pinned

    before = run_names(root)
    proc = snakegate(root, "rerun", first.name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rerun = new_run(root, before)

    source = json.loads((rerun / "source.json").read_text())
    assert (source["commit"], source["tree"], source["via_run"]) == (pinned, tree, first.name)
    assert "changed after the first run" not in (rerun / "workflow" / "Snakefile").read_text()

    data = json.loads((rerun / "prov.json").read_text())
    (workflow,) = [a for a in data["entity"].values() if "wfdesc:Workflow" in json.dumps(a.get("prov:type"))]
    assert val(workflow["dct:isPartOf"]) == f"registry:{pinned}" and val(workflow["sg:gitTree"]) == tree
    assert val(workflow["sg:copiedVia"]) == run_ident(first)  # the run it came through, by its IRI
    assert val(data["entity"][f"registry:{pinned}"]["schema:version"]) == pinned
    current = [r for r in data["used"].values()
               if r["prov:activity"] == run_ident(rerun) and r["prov:entity"] == f"registry:{moved}"]
    assert len(current) == 1 and val(current[0]["prov:role"]) == "sg:currentRegistry"
