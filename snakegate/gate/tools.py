"""What a workflow declares it needs from this machine: external tools (workflow.yaml `tools:`) on PATH,
and the Python packages its Snakefile imports while Snakemake parses it (`python_packages:`).

The gate asks `tool_errors()` (a PATH lookup per tool, nothing run) and refuses a
run whose tools are missing with `tool_missing`, naming the install command;
`package_errors()` does the same for packages (an import-system lookup: nothing is
imported, so no package code runs) with `package_missing`.
`tool_version()` runs a tool's declared `version_command` (no shell, a short
timeout) for whoever records what ran. Nothing here writes a file.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

from snakegate.models import GateError, Manifest, PythonPackage, Tool

VERSION_TIMEOUT_S = 10
VERSION_OUTPUT_LIMIT = 64 * 1024


def missing_tools(manifest: Manifest, path: str | None = None) -> list[Tool]:
    """The declared tools `shutil.which` does not find on `path` (default: this process's PATH)."""
    return [tool for tool in manifest.tools if shutil.which(tool.name, path=path) is None]


def tool_error(workflow_id: str, tool: Tool) -> GateError:
    return GateError(
        path=f"tools.{tool.name}", code="tool_missing",
        message=(f"workflow `{workflow_id}` needs the external tool `{tool.name}`, which is not on PATH "
                 "on this machine, so its jobs cannot run here"),
        hint=f"install it: `{tool.install}` (or load its module / activate its environment), then run again")


def tool_errors(workflow_id: str, manifest: Manifest, path: str | None = None) -> list[GateError]:
    """One `tool_missing` gate error per declared tool that is not on PATH."""
    return [tool_error(workflow_id, tool) for tool in missing_tools(manifest, path)]


def importable(module: str) -> bool:
    """Whether `import module` would find it here, found without importing (no package code runs)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_packages(manifest: Manifest) -> list[PythonPackage]:
    """The declared Python packages this interpreter (the one Snakemake runs under) cannot import."""
    return [package for package in manifest.python_packages if not importable(package.import_name)]


def package_errors(workflow_id: str, manifest: Manifest) -> list[GateError]:
    """One `package_missing` gate error per declared Python package that cannot be imported here."""
    return [GateError(
        path=f"python_packages.{package.name}", code="package_missing",
        message=(f"workflow `{workflow_id}` imports the Python package `{package.import_name}` while Snakemake "
                 "reads its Snakefile, and it is not installed in the environment snakegate runs in"),
        hint=f"install it: `{package.install}` (in the same environment as snakegate), then run again")
        for package in missing_packages(manifest)]


def only_tools_missing(errors: list[GateError]) -> bool:
    """True when every refusal is a missing tool or package: the invocation is fine, this machine is not."""
    return bool(errors) and all(e.code in ("tool_missing", "package_missing") for e in errors)


def parse_version(tool: Tool, output: str) -> str | None:
    """The version in a version command's output: the pattern's first group, else the first non-empty line."""
    if tool.version_pattern:
        m = re.search(tool.version_pattern, output, flags=re.MULTILINE)
        if not m:
            return None
        return (m.group(1) if m.groups() else m.group(0)).strip() or None
    return next((line.strip() for line in output.splitlines() if line.strip()), None)


def tool_version(tool: Tool) -> str | None:
    """Run the tool's version command and return its version, or None when it cannot be found or read.

    Many tools print their version on stderr and exit non-zero when asked (bwa prints
    its usage and exits 1), so both streams are read and the exit code is ignored.
    """
    exe = shutil.which(tool.version_command[0])
    if exe is None:
        return None
    try:
        proc = subprocess.run([exe, *tool.version_command[1:]], capture_output=True, timeout=VERSION_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return None
    output = (proc.stdout[:VERSION_OUTPUT_LIMIT] + b"\n" + proc.stderr[:VERSION_OUTPUT_LIMIT]).decode("utf-8", "replace")
    return parse_version(tool, output)
