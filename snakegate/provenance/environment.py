"""The environment a run executed in: Python and its distributions, the machine, external tools, built-ins.

Facts, not judgements: the Python distributions installed in the running
interpreter's environment (name==version, which includes every workflow's
scientific stack), the Python version and implementation, the operating
system, the CPU count, the host name (unless the registry's settings opt out),
each executable the manifest's `tools:` lists with its path, sha256 and the
version its declared `version_command` prints (parsed with its
`version_pattern`), and the library (with version) that provides a
`builtin:` dataset.

Reads the interpreter's metadata and runs each tool's version command once
(no shell, bounded by a timeout); never writes. Results are cached per process.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import shutil
import socket
import subprocess
from importlib import metadata

from snakegate.provenance.hashing import sha256_file

TOOL_TIMEOUT_S = 10.0


def distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def python_distributions() -> tuple[str, ...]:
    """Every distribution importable by this interpreter as `name==version`, sorted, one per name (the first
    on sys.path wins, as for imports). Read from the `<name>-<version>.dist-info` folder names, which the
    wheel spec fixes, so 400 installed distributions cost milliseconds, not 400 metadata parses."""
    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        folder = getattr(dist, "_path", None)
        name = version = None
        stem = folder.name[:-len(".dist-info")] if folder is not None and folder.name.endswith(".dist-info") else ""
        if stem.count("-") == 1:
            name, version = stem.split("-")
        if not name or not version:  # egg-info, or an unusual folder name: ask the metadata
            name, version = (dist.metadata.get("Name") or "").strip(), dist.version
        if name:
            key = re.sub(r"[-_.]+", "-", name).lower()  # PEP 503 normalised
            seen.setdefault(key, f"{key}=={version}")
    return tuple(sorted(seen.values()))


def host_facts(record_hostname: bool = True) -> dict:
    """Python, operating system, machine and CPU count; the host name unless `record_hostname` is False."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    facts = {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "os": platform.system(),
        "os_release": platform.release(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
    }
    if record_hostname:
        facts["hostname"] = socket.gethostname()
    return facts


def _declared(tools) -> list[tuple[str, tuple[str, ...], str | None]]:
    """(name, version command, version pattern) of each tool a manifest's `tools:` declares
    (mappings as the manifest schema defines them; a bare name is asked `--version`)."""
    out = []
    for tool in tools or ():
        if isinstance(tool, str):
            tool = {"name": tool}
        name = tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and name.strip():
            command = tool.get("version_command") or [name, "--version"]
            out.append((name.strip(), tuple(str(c) for c in command), tool.get("version_pattern")))
    return out


@functools.lru_cache(maxsize=64)
def tool_fact(name: str, version_command: tuple[str, ...], version_pattern: str | None) -> dict:
    """{name, path, sha256, version} of an executable on PATH (path None when it is not found). The version
    is what its declared command prints (stdout and stderr, exit code ignored: bwa prints its usage and
    exits 1): the pattern's first group, else the first non-empty line."""
    path = shutil.which(name)
    if path is None:
        return {"name": name, "path": None, "sha256": None, "version": None}
    real = os.path.realpath(path)
    try:
        digest = sha256_file(real)
    except OSError:
        digest = None
    return {"name": name, "path": real, "sha256": digest, "version": _version(version_command, version_pattern)}


def _version(command: tuple[str, ...], pattern: str | None) -> str | None:
    exe = shutil.which(command[0]) if command else None
    if exe is None:
        return None
    try:
        proc = subprocess.run([exe, *command[1:]], capture_output=True, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return None
    output = (proc.stdout[:65536] + b"\n" + proc.stderr[:65536]).decode("utf-8", "replace")
    if pattern:
        try:
            found = re.search(pattern, output, flags=re.MULTILINE)
        except re.error:
            return None
        return ((found.group(1) if found.groups() else found.group(0)).strip() or None) if found else None
    return next((line.strip() for line in output.splitlines() if line.strip()), None)


def tool_facts(tools) -> list[dict]:
    return [tool_fact(name, command, pattern) for name, command, pattern in _declared(tools)]


def builtin_datasets(schema: dict, params: dict) -> list[dict]:
    """{param, value, name, distribution, version} for every `builtin:` value a param takes from its
    `x-builtins` list; the distribution is the param's `x-builtins-from` (None when undeclared)."""
    out = []
    for name, sub in ((schema or {}).get("properties") or {}).items():
        value = (params or {}).get(name)
        if isinstance(sub, dict) and isinstance(value, str) and value in (sub.get("x-builtins") or []):
            dist = sub.get("x-builtins-from")
            out.append({"param": name, "value": value, "name": value.split(":", 1)[-1], "distribution": dist,
                        "version": distribution_version(dist) if dist else None})
    return out
