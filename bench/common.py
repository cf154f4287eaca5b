"""Shared bench plumbing: timing, the machine record, the load gate and a throw-away fan-out registry.

Benchmarks are scripts, not tests: they print a table and write
bench/results.json. Nothing here asserts; a missed target is reported, never
raised. Every temporary folder lives under one `Scratch` root that is removed
at the end.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results.json"
FANOUT = BENCH / "fanout"

PYTHON = sys.executable
SNAKEGATE = shutil.which("snakegate") or "snakegate"
SNAKEMAKE = shutil.which("snakemake") or "snakemake"

TINY_TABLE = "id,value\n1,0.5\n2,1.5\n"


# ---- timing -------------------------------------------------------------------------------------------------

def run_timed(cmd: list[str], cwd: Path | None = None, timeout: float = 600, env: dict | None = None) -> tuple[float, int, str]:
    """(wall seconds, exit code, last lines of output) of one command; output is captured, not shown."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, -9, f"timed out after {timeout:.0f} s"
    wall = time.perf_counter() - start
    tail = "\n".join(proc.stdout.strip().splitlines()[-6:])
    return wall, proc.returncode, tail


def measured(cmd: list[str], cwd, timeout: float = 3600) -> dict:
    """wall s, cpu s (user + sys of the process and every descendant it reaped), peak RSS MiB of the largest
    of them, exit code: the kernel's accounting of this one child (wait4), not of earlier ones. The wait
    blocks (a timer kills the child at `timeout`), so the wall time has no polling step: a listing takes
    a few hundred ms, and a 50 ms poll would be a fifth of it."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024,
            "exit": proc.returncode}


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def r3(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# ---- the machine and its load -------------------------------------------------------------------------------

def load_average() -> float:
    return os.getloadavg()[0]


def wait_until_quiet(max_load: float, max_wait_s: float, poll_s: float = 20.0) -> dict:
    """Poll the 1-minute load average until it is below `max_load` or `max_wait_s` has passed."""
    start = time.monotonic()
    seen = load_average()
    while seen >= max_load and time.monotonic() - start < max_wait_s:
        print(f"  load average {seen:.2f} >= {max_load}; waiting (up to {max_wait_s - (time.monotonic() - start):.0f} s more)",
              file=sys.stderr, flush=True)
        time.sleep(poll_s)
        seen = load_average()
    return {"load_at_start": round(seen, 2), "waited_s": round(time.monotonic() - start, 1),
            "quiet": seen < max_load, "max_load": max_load}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def machine() -> dict:
    import snakemake
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "snakemake": snakemake.__version__,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


# ---- a throw-away registry holding the fan-out workflow -----------------------------------------------------

@dataclass
class FanoutRegistry:
    """A real registry folder: the top-level Snakefile, workflows/fanout, data/fanout/tiny.csv."""

    root: Path

    @property
    def table(self) -> Path:
        return self.root / "data" / "fanout" / "tiny.csv"

    @property
    def snakefile(self) -> Path:
        return self.root / "workflows" / "fanout" / "Snakefile"

    def params(self, n_jobs: int, width: int = 0) -> dict:
        """The resolved params (what the gate hands Snakemake): absolute table path, every default explicit."""
        return {"table_file": str(self.table), "n_jobs": n_jobs, "width": width}

    def run_config(self, n_jobs: int, width: int = 0) -> Path:
        """A run config as a user writes it (relative data path), for `snakegate validate/run`."""
        path = self.root / f"fanout-{n_jobs}-w{width}.yaml"
        path.write_text("workflow: fanout\nparams:\n  table_file: data/fanout/tiny.csv\n"
                        f"  n_jobs: {n_jobs}\n  width: {width}\n")
        return path

    def params_file(self, n_jobs: int, width: int = 0) -> Path:
        """The workflow's own configfile, for plain `snakemake -s workflows/fanout/Snakefile`."""
        path = self.root / f"fanout-{n_jobs}-w{width}.params.yaml"
        path.write_text(json.dumps(self.params(n_jobs, width)))  # JSON is YAML
        return path


def make_fanout_registry(parent: Path) -> FanoutRegistry:
    root = parent / "registry"
    (root / "workflows").mkdir(parents=True)
    shutil.copy2(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(FANOUT, root / "workflows" / "fanout",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "data" / "fanout").mkdir(parents=True)
    (root / "data" / "fanout" / "tiny.csv").write_text(TINY_TABLE)
    return FanoutRegistry(root)


class Scratch:
    """One temporary folder for a whole bench session; `fresh(name)` hands out empty sub-folders."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="snakegate-bench-"))
        self._n = 0

    def fresh(self, name: str) -> Path:
        self._n += 1
        path = self.root / f"{name}-{self._n}"
        path.mkdir(parents=True)
        return path

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# ---- results ------------------------------------------------------------------------------------------------

def read_results() -> dict:
    try:
        return json.loads(RESULTS.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def write_results(data: dict, path: Path = RESULTS) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def fmt_s(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
