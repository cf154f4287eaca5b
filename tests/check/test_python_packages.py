"""Python packages a Snakefile imports while Snakemake reads it: declared in workflow.yaml, looked up
without importing, refused by the gate when missing, and an undeclared one that is not installed fails
`check` naming the module, the line and the fix (issue 27: a Nextstrain build imports `augur`)."""

from __future__ import annotations

import textwrap

import pytest

from registry_copies import make_registry, one_rule_workflow
from snakegate.check.facts import WorkflowFacts
from snakegate.check.packages import look_up, package_findings
from snakegate.check.reading import read_workflow
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry, RegistryError, load_workflow

ABSENT = "sg_surely_not_installed_pkg"  # a module no environment has


def workflow(packages: str = "", imports: str = "") -> dict[str, str]:
    """A one-rule workflow whose workflow.yaml carries `packages` and whose Snakefile starts with `imports`."""
    files = one_rule_workflow("imports", "Imports a package", "Its Snakefile imports a package while it is read.",
                              "echo {params.label} > {output.note}")
    indent = " " * 12  # the manifest's lines before make_registry dedents them
    trust = "trust: community\n"
    files["workflow.yaml"] = files["workflow.yaml"].replace(trust, f"{trust}{indent}{packages}\n")
    files["Snakefile"] = textwrap.dedent(imports) + textwrap.dedent(files["Snakefile"])
    return files


def findings_of(root, wf_id="imports"):
    folder = root / "workflows" / wf_id
    source = read_workflow(folder, root)
    manifest = __import__("yaml").safe_load((folder / "workflow.yaml").read_text())
    facts = WorkflowFacts(id=wf_id, folder=str(folder), rel=f"workflows/{wf_id}", root=str(root))
    facts.missing_packages, facts.unimportable = look_up(manifest, source, folder)
    return package_findings(facts)


def test_an_import_neither_installed_nor_declared_fails_check_naming_the_module_line_and_fix(tmp_path):
    root = make_registry(tmp_path / "reg", {"imports": workflow(imports=f"import os\nimport {ABSENT}.sub\n")})
    (finding,) = findings_of(root)
    assert (finding.severity, finding.code, finding.line) == ("error", "import_undeclared", 2)
    assert f"imports `{ABSENT}`" in finding.message and "ModuleNotFoundError" in finding.message
    assert "python_packages:" in finding.hint and f"pip install {ABSENT}" in finding.hint


def test_a_declared_package_missing_here_is_a_warning_naming_its_install_command(tmp_path):
    packages = f"python_packages: [{{name: sg-absent, module: {ABSENT}, install: 'pip install sg-absent'}}]"
    root = make_registry(tmp_path / "reg", {"imports": workflow(packages, imports=f"from {ABSENT} import x\n")})
    (finding,) = findings_of(root)
    assert (finding.severity, finding.code) == ("warning", "package_missing")
    assert f"`{ABSENT}`" in finding.message and finding.file == "workflows/imports/workflow.yaml"
    assert "pip install sg-absent" in finding.hint


def test_an_optional_import_a_shipped_module_and_an_installed_package_are_not_reported(tmp_path):
    imports = (f"try:\n    import {ABSENT}\nexcept ImportError:\n    {ABSENT} = None\n"
               "import helpers\nimport yaml\nfrom . import nothing\n")
    files = workflow(imports=imports) | {"helpers.py": "X = 1\n"}
    root = make_registry(tmp_path / "reg", {"imports": files})
    assert findings_of(root) == []


def test_the_gate_refuses_a_run_whose_declared_package_is_missing_naming_the_install(tmp_path):
    packages = f"python_packages: [{{name: sg-absent, module: {ABSENT}, install: 'pip install sg-absent'}}]"
    root = make_registry(tmp_path / "reg", {"imports": workflow(packages)})
    result = gate(Registry.load(root), {"workflow": "imports"}, load_settings(root))
    assert not result.ok
    (error,) = result.errors
    assert (error.path, error.code) == ("python_packages.sg-absent", "package_missing")
    assert f"`{ABSENT}`" in error.message and "pip install sg-absent" in error.hint


def test_a_declared_package_that_is_installed_passes_the_gate(tmp_path):
    packages = "python_packages: [{name: PyYAML, module: yaml, install: 'pip install PyYAML'}]"
    root = make_registry(tmp_path / "reg", {"imports": workflow(packages, imports="import yaml\n")})
    assert gate(Registry.load(root), {"workflow": "imports"}, load_settings(root)).ok
    assert findings_of(root) == []


@pytest.mark.parametrize("entry", [
    "{name: x}",                                        # no install command
    "{name: x, install: 'pip install x', modul: x}",    # a misspelt key
    "{name: 'x; rm -rf ~', install: 'pip install x'}",  # not a package name
])
def test_a_malformed_python_packages_entry_is_refused_by_the_manifest_schema(tmp_path, entry):
    root = make_registry(tmp_path / "reg", {"imports": workflow(f"python_packages: [{entry}]")})
    with pytest.raises(RegistryError) as raised:
        load_workflow(root / "workflows" / "imports")
    assert "python_packages" in str(raised.value.message)
