"""`snakegate show ID` and `snakegate list` name the programs a workflow runs besides Python (workflow.yaml
`tools:`) and how to install them, and the README's workflow list says the same (issue 29 §3).

The CLI in-process on the repository's own registry; which tools this machine has is decided by PATH, set
here so the answer does not depend on the machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _tools(workflow: str) -> list[dict]:
    return yaml.safe_load((REPO / "workflows" / workflow / "workflow.yaml").read_text()).get("tools") or []


def test_show_lists_each_external_tool_with_the_command_that_installs_it(cli, registry_root, monkeypatch,
                                                                         tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    (tmp_path / "bwa").write_text("#!/bin/sh\n")
    (tmp_path / "bwa").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # this machine has bwa only
    code, out, err = cli("--registry", registry_root, "show", "variant-calling")
    assert code == 0, err
    section = out.split("Tools (programs it runs besides Python)\n", 1)[1].split("\n\n", 1)[0]
    for tool in _tools("variant-calling"):
        here = "found on PATH" if tool["name"] == "bwa" else "not on PATH here"
        assert f"  {tool['name']}: {here}; install with {tool['install']}" in section
    assert "The gate refuses a run while a tool is missing" in section
    assert max(len(line) for line in out.splitlines()) <= 80


def test_show_says_a_workflow_without_tools_needs_only_python(cli, registry_root):
    code, out, _ = cli("--registry", registry_root, "show", "tabular-profile")
    assert code == 0
    assert "Tools (programs it runs besides Python)\n  none: its steps run on Python" in out


def test_readme_workflow_list_is_what_snakegate_list_prints_tools_included(cli, registry_root):
    code, out, _ = cli("--registry", registry_root, "list")
    assert code == 0
    readme = (REPO / "README.md").read_text()
    shown = re.search(r"\$ snakegate list\n(.*?)\n\n", readme, re.S).group(1)
    assert shown == out.rstrip("\n")
    for wf in sorted(p.parent.name for p in (REPO / "workflows").glob("*/workflow.yaml")):
        names = [t["name"] for t in _tools(wf)]
        if names:
            assert f"{wf}" in shown and f"needs {', '.join(names)}" in out.split(wf, 1)[1].splitlines()[1]
