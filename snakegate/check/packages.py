"""Python packages a workflow's Snakefile imports while Snakemake reads it (issue 27: `augur` in a
Nextstrain build), and those its Python scripts import (`script:` or started from `shell:`, unless the rule
brings its own `conda:` environment): each must be declared in workflow.yaml `python_packages:` or be
importable here.

`look_up` (run by gather) asks the import system where each module is, without importing it, so no
package code runs; `package_findings` is the pure proof over what it found:
- a declared package this environment cannot import: a warning (`package_missing`), as a missing tool
  is — the workflow is fine, this machine cannot run or test it — naming the install command;
- an import that is neither the standard library, a module shipped in the workflow folder, importable
  here nor declared: an error (`import_undeclared`), because Snakemake would stop reading the Snakefile
  with ModuleNotFoundError after the gate had accepted the run.
An import inside a `try:` that catches ImportError is optional and never reported. Nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from snakegate.check.facts import Finding, WorkflowFacts
from snakegate.gate.tools import importable

CODE = "package_missing"
UNDECLARED = "import_undeclared"
_LOCAL_SCAN_LIMIT = 5000  # entries of the workflow folder looked at for modules it ships (a hostile folder is big)


def _shipped_modules(folder: Path) -> set[str]:
    """Module names the workflow folder itself provides (`name.py` or a `name/` folder), at any depth."""
    names: set[str] = set()
    try:
        for seen, path in enumerate(folder.rglob("*")):
            if seen >= _LOCAL_SCAN_LIMIT:
                break
            if path.is_symlink():
                continue
            if path.suffix == ".py":
                names.add(path.stem)
            elif path.is_dir():
                names.add(path.name)
    except OSError:
        pass
    return names


def look_up(manifest: dict | None, source, folder: Path) -> tuple[list[dict], list[tuple[str, str, int | None]]]:
    """(declared packages not importable here, undeclared imports not importable here)."""
    declared = [p for p in ((manifest or {}).get("python_packages") or []) if isinstance(p, dict)
                and isinstance(p.get("name"), str)]
    modules = {p.get("module") or p["name"] for p in declared}
    missing = [{"name": p["name"], "module": p.get("module") or p["name"], "install": p.get("install")}
               for p in declared if not importable(p.get("module") or p["name"])]
    unknown: list[tuple[str, str, int | None]] = []
    imports = list(getattr(source, "imports", None) or [])
    # a Python script runs in this environment too, unless its rule brings a conda environment of its own
    for script in getattr(source, "scripts", None) or []:
        rule = source.rule(script.rule)
        if script.language == "python" and not (rule is not None and rule.conda):
            imports.extend((module, script.file, line) for module, line in script.imports)
    shipped = _shipped_modules(folder) if imports else set()
    seen: set[str] = set()
    for module, file, line in imports:
        if module in seen or module in modules or module in sys.stdlib_module_names or module in shipped:
            continue
        seen.add(module)
        if not importable(module):
            unknown.append((module, file, line))
    return missing, unknown


def package_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    for package in f.missing_packages:
        out.append(Finding("warning", f.id, CODE,
                           f"declared Python package `{package['module']}` cannot be imported in this environment, "
                           "so this workflow cannot be run or tested on this machine",
                           file=f"{f.rel}/workflow.yaml",
                           hint=f"install it into snakegate's environment: `{package['install']}`"))
    scripts = {s.file for s in (f.source.scripts if f.source else [])}
    for module, file, line in f.unimportable:
        what = (f"{file} imports `{module}`, which is not installed here and not declared under `python_packages:` in "
                "workflow.yaml: its job would fail (ModuleNotFoundError)" if file in scripts else
                f"the Snakefile imports `{module}`, which is not installed here and not declared under "
                "`python_packages:` in workflow.yaml: Snakemake would stop reading the Snakefile "
                "(ModuleNotFoundError)")
        out.append(Finding("error", f.id, UNDECLARED, what + " after the gate accepted the run",
                           file=file, line=line,
                           hint=(f"declare it in workflow.yaml, e.g. `python_packages: [{{name: {module}, install: "
                                 f"\"pip install {module}\"}}]` (add `module:` when the import name differs), and "
                                 "install it into snakegate's environment")))
    return out
