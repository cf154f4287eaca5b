"""The environment a run executed in: Python and its distributions, the machine, external tools, built-ins.

Facts, not judgements: the Python distributions installed in the running
interpreter's environment (name==version, which includes every workflow's
scientific stack), the Python version and implementation, the operating
system, the CPU count, the host name (unless the registry's settings opt out),
each executable the manifest's `tools:` lists with its path, sha256 and the
version it reports, and the library (with version) that provides a
`builtin:` dataset.

Reads the interpreter's metadata and runs each tool once with a version flag
(bounded by a timeout); never writes. Results are cached per process.
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

TOOL_TIMEOUT_S = 5.0
# the first thing that looks like a version in a tool's output: 1.16.1, 0.7.17-r1188, v2.3b
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:[-+._]?[A-Za-z0-9]+)*)")


def distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def python_distributions() -> tuple[str, ...]:
    """Every distribution importable by this interpreter as `name==version`, sorted, one per name."""
    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "").strip()
        if name:
            key = re.sub(r"[-_.]+", "-", name).lower()  # PEP 503 normalised
            seen.setdefault(key, f"{key}=={dist.version}")
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


def _tool_names(tools) -> list[str]:
    """The executables a manifest's `tools:` names (plain names, or mappings with a `name`)."""
    out = []
    for tool in tools or ():
        name = tool.get("name") if isinstance(tool, dict) else tool
        if isinstance(name, str) and name.strip():
            out.append(name.strip())
    return out


@functools.lru_cache(maxsize=64)
def tool_fact(name: str) -> dict:
    """{name, path, sha256, version} of an executable on PATH; path None when it is not found."""
    path = shutil.which(name)
    if path is None:
        return {"name": name, "path": None, "sha256": None, "version": None}
    real = os.path.realpath(path)
    try:
        digest = sha256_file(real)
    except OSError:
        digest = None
    return {"name": name, "path": real, "sha256": digest, "version": _probe_version(path)}


def _probe_version(path: str) -> str | None:
    """The version a tool reports for `--version`, `version` or no argument (bwa prints it in its usage)."""
    for args in (["--version"], ["version"], []):
        try:
            proc = subprocess.run([path, *args], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, errors="replace")
        except (OSError, subprocess.SubprocessError):
            continue
        for line in (proc.stdout + "\n" + proc.stderr).splitlines()[:20]:
            if "version" in line.lower() or os.path.basename(path).lower() in line.lower():
                found = _VERSION.search(line)
                if found:
                    return found.group(1)
    return None


def tool_facts(tools) -> list[dict]:
    return [tool_fact(name) for name in _tool_names(tools)]


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
