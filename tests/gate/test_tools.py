"""Declared external tools: the gate refuses a run when one is not on PATH and names how to install it;
`snakegate check` only warns and `snakegate test` skips, saying why; versions are read from the tool itself.

The tool is a real executable script put on (or left off) PATH, so `shutil.which`
and the version command run for real.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from registry_copies import clean_env, make_registry
from snakegate.gate.prove import gate
from snakegate.models import Tool
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings
from snakegate.gate.tools import parse_version, tool_version

TOOL = "sg-probe-tool"
INSTALL = "sudo apt-get install sg-probe-tool"
WORKFLOW = {
    "workflow.yaml": f"""\
        id: needs-tool
        version: 0.1.0
        title: Needs a tool
        description: A one-rule workflow that runs an external executable.
        tags: [test]
        maintainers: [{{name: snakegate tests}}]
        trust: community
        tools:
          - name: {TOOL}
            version_command: [{TOOL}, --version]
            version_pattern: 'probe-tool version (\\S+)'
            install: {INSTALL}
        rules:
          stamp: {{output: {{stamp: text}}}}
        outputs:
          stamp: {{path: results/stamp.txt, type: text, description: What the tool printed.}}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "properties": {"word": {"type": "string", "default": "hello", "description": "The word the tool prints."}},
    }),
    "Snakefile": f"""\
        from snakemake.utils import validate

        validate(config, "schema.json")


        rule all:
            input:
                "results/stamp.txt",


        rule stamp:
            output:
                stamp="results/stamp.txt",
            params:
                word=config["word"],
            shell:
                "{TOOL} {{params.word}} > {{output.stamp}}"
        """,
    "examples/basic.yaml": "workflow: needs-tool\nparams:\n  word: hello\n",
    "test/basic/config.yaml": "workflow: needs-tool\nparams:\n  word: hello\n",
    "test/basic/expected/results/stamp.txt": "probe says hello\n",
}


def fake_tool(folder: Path) -> Path:
    """A real executable that prints its version on stderr and exits 1 when asked (as bwa does)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / TOOL
    exe.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'probe-tool version 2.5.1-r7' >&2; exit 1; fi\n"
                   "echo \"probe says $1\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


@pytest.fixture
def reg(tmp_path):
    root = make_registry(tmp_path / "reg")
    folder = root / "workflows" / "needs-tool"
    for name, text in WORKFLOW.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def cli(root: Path, *args, path: str) -> subprocess.CompletedProcess:
    env = clean_env(PATH=path)
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def base_path() -> str:
    """PATH without any folder that might hold the probe tool: the interpreter's folder and the system's."""
    return os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/bin", "/bin"]))


def test_gate_refuses_a_missing_tool_naming_the_install_command(reg, monkeypatch):
    monkeypatch.setenv("PATH", base_path())
    result = gate(Registry.load(reg), {"workflow": "needs-tool"}, load_settings(reg))
    assert not result.ok
    assert [(e.path, e.code) for e in result.errors] == [(f"tools.{TOOL}", "tool_missing")]
    assert f"`{TOOL}`" in result.errors[0].message and "not on PATH" in result.errors[0].message
    assert INSTALL in result.errors[0].hint


def test_missing_tool_is_reported_together_with_param_errors(reg, monkeypatch):
    monkeypatch.setenv("PATH", base_path())
    result = gate(Registry.load(reg), {"workflow": "needs-tool", "params": {"word": 3}}, load_settings(reg))
    assert sorted(e.code for e in result.errors) == ["tool_missing", "type"]


def test_gate_passes_once_the_tool_is_on_path(reg, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(fake_tool(tmp_path / "bin")), base_path()]))
    assert gate(Registry.load(reg), {"workflow": "needs-tool"}, load_settings(reg)).ok


def test_validate_json_and_run_refuse_with_tool_missing(reg):
    (reg / "run.yaml").write_text("workflow: needs-tool\n")
    proc = cli(reg, "validate", "run.yaml", "--json", path=base_path())
    assert proc.returncode == 1
    errors = json.loads(proc.stdout)["errors"]
    assert [e["code"] for e in errors] == ["tool_missing"] and INSTALL in errors[0]["hint"]
    proc = cli(reg, "run", "run.yaml", "--cores", "1", path=base_path())
    assert proc.returncode == 1 and "tool_missing" in proc.stdout + proc.stderr
    assert not (reg / "runs").exists() or not any((reg / "runs").iterdir())


def test_check_warns_about_a_missing_tool_and_still_passes(reg):
    proc = cli(reg, "check", "needs-tool", "--json", path=base_path())
    report = json.loads(proc.stdout)
    findings = [f for f in report["findings"] if f["code"] == "tool_missing"]
    assert proc.returncode == 0, report
    assert [f["severity"] for f in findings] == ["warning"]
    assert INSTALL in findings[0]["hint"]
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def test_test_command_skips_without_the_tool_failing_because_nothing_proved_the_case_and_runs_with_it(reg, tmp_path):
    proc = cli(reg, "test", "needs-tool", path=base_path())
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a case that could not run is never a pass
    assert f"skip  needs-tool/basic: workflow `needs-tool` needs the external tool `{TOOL}`" in proc.stdout
    assert INSTALL in proc.stdout and "1 skipped" in proc.stdout
    assert "1 test case(s) could not run here, so nothing proves them" in proc.stdout
    with_tool = os.pathsep.join([str(fake_tool(tmp_path / "bin")), base_path()])
    proc = cli(reg, "test", "needs-tool", path=with_tool)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok    needs-tool/basic" in proc.stdout and "1 passed, 0 failed" in proc.stdout


def test_version_is_read_from_the_tool_even_on_stderr_with_a_nonzero_exit(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(fake_tool(tmp_path / "bin")), base_path()]))
    tool = Tool(name=TOOL, version_command=[TOOL, "--version"], version_pattern=r"probe-tool version (\S+)",
                install=INSTALL)
    assert tool_version(tool) == "2.5.1-r7"
    monkeypatch.setenv("PATH", base_path())
    assert tool_version(tool) is None


def test_version_defaults_to_the_first_non_empty_line():
    tool = Tool(name="x", version_command=["x", "-v"], install="get x")
    assert parse_version(tool, "\n\n x 1.2 (build 3)\nmore\n") == "x 1.2 (build 3)"


@pytest.mark.parametrize("name, command, pattern", [
    ("bwa", ["bwa"], r"Version: (\S+)"),
    ("samtools", ["samtools", "--version"], r"^samtools (\S+)"),
    ("bcftools", ["bcftools", "--version"], r"^bcftools (\S+)"),
])
def test_real_bioinformatics_tools_report_their_version(name, command, pattern):
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed here")
    version = tool_version(Tool(name=name, version_command=command, version_pattern=pattern, install="apt"))
    assert version and version[0].isdigit(), version


@pytest.mark.parametrize("tools_yaml, says", [
    ("tools: [bwa]", "tools.0"),
    ("tools:\n  - {name: bwa, install: apt-get install bwa}", "version_command"),
    ("tools:\n  - {name: bwa, version_command: [bwa], install: a b}\n  - {name: bwa, version_command: [bwa], "
     "install: apt-get install bwa}", "bwa declared more than once"),
    ("tools:\n  - {name: 'b wa', version_command: [bwa], install: apt-get install bwa}", "tools.0.name"),
])
def test_a_tool_declared_without_name_version_command_or_install_is_a_manifest_error(reg, tools_yaml, says):
    manifest = reg / "workflows" / "needs-tool" / "workflow.yaml"
    text = manifest.read_text()
    start = text.index("tools:")
    end = text.index("rules:")
    manifest.write_text(text[:start] + tools_yaml + "\n" + text[end:])
    broken = Registry.load(reg).broken
    assert "needs-tool" in broken and says in broken["needs-tool"], broken
