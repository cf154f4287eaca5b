"""`snakegate test` runs Snakemake the way `snakegate run` does (issue 27 §2): a profile reaches Snakemake only
through `--profile` (or $SNAKEMAKE_PROFILE) after the same allow-list, the workflow's own `profiles/default/`
is never read unchecked, and a case may choose the declared outputs it builds (`test.targets`), so a workflow
whose other outputs need the network can still be tested offline on the part that does not.

One real Snakemake run, shared read-only by the tests that look at it; the refusals start no Snakemake.
"""
import json
import textwrap
from pathlib import Path

import pytest

from snakegate.registry.workflows import manifest_problems

MANIFEST = {
    "id": "wf", "version": "0.1.0", "title": "Two outputs", "description": "One made offline, one not.",
    "tags": [], "maintainers": [{"name": "t"}], "trust": "community",
    "rules": {"make_a": {"output": {"_1": "text"}}, "make_b": {"output": {"_1": "text"}}},
    "outputs": {"a": {"path": "results/a.txt", "type": "text", "description": "made offline"},
                "b": {"path": "results/b.txt", "type": "text", "description": "needs the network"}},
    "test": {"targets": {"offline": ["a"]}},
}
SNAKEFILE = """\
from snakemake.utils import validate

validate(config, "schema.json")

rule all:
    input: "results/a.txt", "results/b.txt"

rule make_a:
    output: "results/a.txt"
    resources: mem_mb=1
    shell: "echo {resources.mem_mb} > {output}"

rule make_b:
    output: "results/b.txt"
    shell: "echo 'no network here' >&2; exit 1"
"""


def _registry(root: Path) -> Path:
    import yaml

    wf = root / "workflows" / "wf"
    (wf / "examples").mkdir(parents=True)
    (root / "snakegate.toml").write_text("")
    (wf / "workflow.yaml").write_text(yaml.safe_dump(MANIFEST, sort_keys=False))
    (wf / "schema.json").write_text(json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "properties": {}}))
    (wf / "Snakefile").write_text(SNAKEFILE)
    (wf / "examples" / "run.yaml").write_text("workflow: wf\nparams: {}\n")
    # read by plain Snakemake from beside the Snakefile unless told otherwise: with it nothing would be built
    (wf / "profiles" / "default").mkdir(parents=True)
    (wf / "profiles" / "default" / "config.yaml").write_text("dryrun: true\n")
    case = wf / "test" / "offline"
    (case / "expected" / "results").mkdir(parents=True)
    (case / "config.yaml").write_text("workflow: wf\nparams: {}\n")
    (case / "expected" / "results" / "a.txt").write_text("123\n")
    return root


def _profile(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(textwrap.dedent(text))
    return folder


@pytest.fixture(scope="module")
def offline_case(tmp_path_factory):
    """`snakegate test wf --profile P` once, P setting make_a's mem_mb to 123: (exit code, stdout)."""
    import subprocess
    import sys

    base = tmp_path_factory.mktemp("targets")
    root = _registry(base / "registry")
    profile = _profile(base / "profile", "set-resources:\n  - make_a:mem_mb=123\n")
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "--registry", str(root), "test", "wf",
                           "--profile", str(profile)], capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_case_builds_only_the_outputs_it_names_as_targets(offline_case):
    code, out = offline_case
    assert code == 0, out
    assert "results/a.txt" in out and "results/b.txt" not in out


def test_a_profile_given_to_test_reaches_snakemake_as_under_run(offline_case):
    code, out = offline_case
    assert "identical" in out and "differs" not in out, out  # a.txt holds 123, the profile's mem_mb, not 1


def test_the_workflows_own_default_profile_is_not_read(offline_case):
    code, out = offline_case
    assert "missing" not in out, out  # its dryrun: true would have built nothing


def test_a_profile_that_could_change_what_is_built_is_refused_before_any_run(tmp_path, cli):
    root = _registry(tmp_path / "registry")
    profile = _profile(tmp_path / "profile", "forcerun: [make_b]\n")
    code, out, err = cli("--registry", root, "test", "wf", "--profile", profile)
    assert code == 2, out + err
    assert "is refused" in err and "`forcerun` is not one of the options a profile may set" in err
    assert "Traceback" not in out + err


def test_targets_naming_an_output_the_workflow_does_not_declare_are_refused_with_the_names():
    manifest = {**MANIFEST, "test": {"targets": {"offline": ["a", "c"]}}}
    assert manifest_problems(manifest, "wf") == [
        "test.targets.offline: `c` is not a declared output of the workflow (its outputs: a, b)"]
