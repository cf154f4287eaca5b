"""Where the test suite's CPU goes: every Python process it starts, by kind, against the whole.

    python bench/suite_cpu.py                      # the README's test command
    python bench/suite_cpu.py -- -m "not slow"     # any pytest arguments after --
    python bench/suite_cpu.py -- tests/run/test_runs.py
    python bench/suite_cpu.py --by-file 25         # also: the 25 test files whose processes cost most

The suite is CPU-bound on a small machine (its wall time is about its CPU time over the cores), so what
would make it faster is what costs the CPU. pytest runs with a `sitecustomize` first on PYTHONPATH that,
as each Python process exits, writes its own CPU seconds (user + system, its threads included) and its
command line to a scratch folder; the total is the CPU of pytest and everything it started (RUSAGE_CHILDREN),
as bench/suite_time.py counts it. What no record covers is printed as such: tools that are not Python
(git, bwa, Chromium, Slurm), processes ended by a signal, and the gate's sandbox workers where they run
without namespaces (their scrubbed environment drops the recorder's variable). Where they run in
namespaces nobody waits for them: their CPU is in no record and not in the total either, only in the whole
machine's figure printed beside it (bench/suite_time.py says why). Each record also names the test that
was running when the process started (pytest's PYTEST_CURRENT_TEST, which child processes inherit); a
session fixture's runs count for the first test that asked for it. A test that compares environments may
see the extra PYTHONPATH entry; the numbers are for reading, not for a pass/fail. Writes nothing outside a
temporary folder.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
from pathlib import Path

from suite_time import time_command

RECORDER = r'''
import atexit, os, resource, sys
def _record():
    try:
        r = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.path.join(os.environ["SUITE_CPU_RECORDS"], str(os.getpid())), "w") as fh:
            test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
            fh.write(f"{r.ru_utime + r.ru_stime:.3f}\t{test}\t{' '.join(sys.orig_argv)[:400]}\n")
    except Exception:
        pass
if os.environ.get("SUITE_CPU_RECORDS"):
    atexit.register(_record)
'''

# first match wins
KINDS = [
    ("Snakemake started by snakegate run", r"-m snakemake --snakefile \S*/entry/Snakefile"),
    ("Snakemake started by a test (plain)", r"-m snakemake\b"),
    ("workflow jobs (script: directive)", r"\.snakemake/scripts/"),
    ("snakegate command line", r"snakegate\.cli\b|/bin/snakegate\b"),
    ("roc-validator", r"rocrate|rocval"),
    ("pip and venv", r"\bpip\b|-m venv"),
    ("pytest and its workers", r"pytest|execnet|exec\(eval\(sys\.stdin"),
    ("MCP server", r"\bmcp\b"),
]


def classify(cmd: str) -> str:
    for name, pattern in KINDS:
        if re.search(pattern, cmd):
            return name
    return "other Python"


def _count(text: str) -> int:
    """--by-file's N: a whole number from 0 up (a negative one would silently list all but the last files)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of files: give a whole number, e.g. 20")
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--by-file", type=_count, default=0, metavar="N",
                        help="also list the N test files whose processes took the most CPU")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest (default: -q)")
    options = parser.parse_args()
    pytest_args = options.pytest_args or ["-q"]
    with tempfile.TemporaryDirectory(prefix="snakegate-bench-cpu-") as tmp:
        site, records = Path(tmp) / "site", Path(tmp) / "records"
        site.mkdir()
        records.mkdir()
        (site / "sitecustomize.py").write_text(RECORDER, encoding="utf-8")
        env = dict(os.environ, SUITE_CPU_RECORDS=str(records),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
        run = time_command("suite", pytest_args, env=env)
        kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
        files: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
        for record in records.iterdir():
            try:
                cpu, test, cmd = record.read_text(encoding="utf-8").rstrip("\n").split("\t", 2)
            except (OSError, ValueError):
                continue
            test_file = test.split("::", 1)[0] or "(outside any test: pytest itself)"
            for table, key in ((kinds, classify(cmd)), (files, test_file)):
                table[key][0] += 1
                table[key][1] += float(cpu)
    total = max(run["cpu_s"], 1)
    print(f"{run['command']}: {run['summary'] or '(no output)'} (exit {run['exit']})")
    machine = "" if run["machine_cpu_s"] is None else \
        f" (the whole machine: {run['machine_cpu_s'] / 60:.1f}, sandbox workers included; bench/suite_time.py says why)"
    print(f"wall {run['wall_s'] / 60:.1f} min, CPU {run['cpu_s'] / 60:.1f} CPU-min{machine} on {os.cpu_count()} cores "
          f"(load {run['load_before']} -> {run['load_after']})")
    print(f"{'CPU-s':>8} {'share':>6} {'procs':>6} {'each':>6}  kind")
    recorded = 0.0
    for name, (n, cpu) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        recorded += cpu
        print(f"{cpu:8.0f} {100 * cpu / total:5.1f}% {n:6d} {cpu / n:6.2f}  {name}")
    print(f"{total - recorded:8.0f} {100 * (total - recorded) / total:5.1f}%             not recorded (tools "
          "that are not Python, processes ended by a signal, sandbox workers run without namespaces)")
    if options.by_file:
        print(f"\n{'CPU-s':>8} {'procs':>6}  test file whose processes these were (pytest's own CPU not included)")
        for name, (n, cpu) in sorted(files.items(), key=lambda kv: -kv[1][1])[:options.by_file]:
            print(f"{cpu:8.0f} {n:6d}  {name}")
    return run["exit"]  # the table is worth reading either way; a failed or mistyped pytest run still says so


if __name__ == "__main__":
    sys.exit(main())
