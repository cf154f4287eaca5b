"""Time the README's test command and the fast loop on this machine, with the load around them.

    python bench/suite_time.py              # both: `python -m pytest -q` and `python -m pytest -q -m "not slow"`
    python bench/suite_time.py --fast       # the fast loop only
    python bench/suite_time.py --serial     # also the serial run (`-p no:xdist`; about twice as long)

For each command: wall time, the CPU time of pytest and everything it started (user + system), the CPU the
whole machine spent busy meanwhile (from /proc/stat), the 1/5/15-minute load averages before and after
(other people's work on a shared machine shows there), and pytest's closing line. The two CPU figures
differ: a process counts in the first only once its parent has waited for it, and the gate's sandbox
workers are killed together with the `unshare` that started them, which never waits for them; their CPU
(Snakemake's imports, every DAG built in them) shows in the machine's figure only, which also holds
whatever else the machine ran meanwhile (the load says how much). Writes nothing; the README's numbers
come from its output. Like the other scripts here it never fails on a slow machine: it reports. (The tests
themselves are never timed: tests/suite_runner.py.)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "test command": ["-q"],
    "fast loop": ["-q", "-m", "not slow"],
    "serial": ["-q", "-p", "no:xdist"],
}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_busy_s() -> float | None:
    """CPU seconds the whole machine has been busy since it started, all cores together (Linux's /proc/stat:
    user, nice, system, irq and softirq; not idle, iowait or time a hypervisor stole); None where unknown."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
        user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[1:8])
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


def time_command(name: str, args: list[str], env: dict[str, str] | None = None) -> dict:
    """`python -m pytest ARGS` from the checkout: wall and CPU (its own and every child's, and the machine's),
    load, closing line."""
    before, machine_before = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s()
    load_before, start = _load(), time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    wall = time.monotonic() - start
    after, machine_after = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_s()
    # pytest's closing line, or the line of its own error (a usage error goes to stderr only)
    lines = [line for line in proc.stdout.splitlines() if line.strip()] or \
        [line.strip() for line in proc.stderr.splitlines() if "error" in line.lower()]
    return {"name": name, "command": "python -m pytest " + " ".join(args), "exit": proc.returncode,
            "wall_s": round(wall), "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)),
            "machine_cpu_s": None if None in (machine_before, machine_after) else
            round(machine_after - machine_before),
            "load_before": load_before, "load_after": _load(), "summary": lines[-1] if lines else ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="the fast loop only")
    parser.add_argument("--serial", action="store_true", help="also the serial run")
    args = parser.parse_args(argv)
    names = ["fast loop"] if args.fast else ["test command", "fast loop"] + (["serial"] if args.serial else [])
    print(f"{os.cpu_count()} cores; load average (1/5/15 min) at start: {_load()}", flush=True)
    for name in names:
        r = time_command(name, COMMANDS[name])
        machine = "?" if r["machine_cpu_s"] is None else f"{r['machine_cpu_s'] // 60}:{r['machine_cpu_s'] % 60:02d}"
        print(f"{r['name']:<13} {r['command']:<40} wall {r['wall_s'] // 60}:{r['wall_s'] % 60:02d}  "
              f"CPU {r['cpu_s'] // 60}:{r['cpu_s'] % 60:02d} (machine {machine})  "
              f"load {r['load_before']} -> {r['load_after']}  "
              f"(exit {r['exit']}) {r['summary']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
