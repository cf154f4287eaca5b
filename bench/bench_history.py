"""Run history at scale (issue 30): `snakegate runs` and the chat's history with 10 runs, 1,000 runs and ten
10,000-job runs, against reading every run.json with `find ... -exec cat`.

Target (issue 30): listing (`runs --limit 10`, `runs`, the chat's history) <= 0.5 s in each case, reading
run.json (or an index), never the PROV document.

The runs are copies of real runs. A real 10,000-job fan-out costs about 2 minutes of CPU, so ten of them
would cost 20, and a thousand small runs about 25 minutes: the bench makes ONE real `snakegate run` of the
fan-out at 1 job and (not with --quick) ONE real run at 10,000 jobs, then copies each run folder into a
fresh registry per case, one copy per run. Each copy gets its own run id (the original's start time moved
back one minute per copy, and the invocation's first 8 hex, as `new_run_id` makes them) and its own
run_uuid; its run.json is rewritten to match (run_id, the paths naming the old id or the old registry,
started and ended). Everything else in the folder is the real run's: the big files (prov.json: 28 MB at
10,000 jobs, the job records, the outputs) are hard links to the original's, which a listing cannot tell
from a copy. The copies are not in the registry's run index (.snakegate/runs/), so `snakegate verify`
would not accept them; listing never reads the index.

Per case, every measure in a fresh process, interleaved (anchor, runs --limit 10, runs, history, anchor,
...) after one unrecorded pass that warms the disk cache and the .pyc files; min and median of --reps of
the wall time and of the CPU time of the process tree (wait4):

- `snakegate runs --limit 10` and `snakegate runs`;
- the chat's history: what HistoryScreen._load and _fill compute (snakegate.tui.runinfo.list_runs on the
  registry's runs folder, then each row's present_runs.history_row and made_from), without the widget;
- anchor: `find runs -mindepth 2 -maxdepth 2 -name run.json -exec cat {} +`, a floor for reading every
  run's record.

Once per case, not timed: the bytes `snakegate runs` and the history read (rchar of /proc/self/io at exit,
Python's own modules included) beside the bytes of every run.json and every prov.json, which shows whether
a listing read the PROV documents.

    python bench/bench_history.py [--reps 5] [--quick]

--quick: 10 and 100 runs, no 10,000-job run. Prints a table and writes bench/results-history.json (not with
--quick: bench/results-history-quick.json). Never asserts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from common import (BENCH, PYTHON, REPO, SNAKEGATE, Scratch, load_average, machine, make_fanout_registry,
                    measured, median, r3, write_results)

TARGET_S = 0.5
BIG_JOBS = 10_000
FRESH = ("run.json", ".lock", ".heartbeat")  # written anew (run.json) or per folder (the lock), never linked

# The chat's history as HistoryScreen builds it (tui/history.py: _load, then _fill's per-row reading).
HISTORY = """
import sys
from pathlib import Path
from snakegate.registry.settings import load_settings
from snakegate.tui import present_runs, runinfo
settings = load_settings(Path(sys.argv[1]))
rows = [(present_runs.history_row(r), present_runs.made_from(r)) for r in runinfo.list_runs(settings.runs_dir)]
print(len(rows))
"""

# Runs a command's code in this process and reports the bytes it read (rchar) on stderr at exit.
READ_BYTES = """
import atexit, runpy, sys
def report():
    for line in open('/proc/self/io'):
        if line.startswith('rchar:'):
            sys.stderr.write('RCHAR ' + line.split()[1] + '\\n')
atexit.register(report)
mode, rest = sys.argv[1], sys.argv[2:]
if mode == '-c':
    sys.argv = ['-c', *rest[1:]]
    exec(compile(rest[0], '<history>', 'exec'), {'__name__': '__main__'})
else:
    sys.argv = ['snakegate', *rest]
    runpy.run_module('snakegate.cli', run_name='__main__')
"""


# ---- the real runs and their copies -----------------------------------------------------------------------------

def real_run(scratch: Scratch, n_jobs: int) -> Path:
    """One real `snakegate run` of the fan-out (width 100, greedy scheduler, as bench_run.py); its run folder."""
    fan = make_fanout_registry(scratch.fresh(f"source-{n_jobs}"))
    profile = scratch.fresh("profile")
    (profile / "config.yaml").write_text("scheduler: greedy\n")
    config = fan.run_config(n_jobs, 100 if n_jobs > 100 else 0)
    print(f"  a real snakegate run of the fan-out at {n_jobs:,} job(s) ...", flush=True)
    result = measured([SNAKEGATE, "--registry", str(fan.root), "run", str(config), "--cores", "2",
                       "--profile", str(profile)], fan.root)
    folders = sorted((fan.root / "runs").iterdir())
    if result["exit"] != 0 or len(folders) != 1:
        raise SystemExit(f"the real run at {n_jobs} jobs failed (exit {result['exit']}); "
                         f"see {fan.root / 'runs'}")
    print(f"    {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU", flush=True)
    return folders[0]


def _link_or_copy(src: str, dst: str) -> None:
    if Path(src).name in FRESH:
        shutil.copy2(src, dst)
    else:
        os.link(src, dst)


def copy_run(source: Path, runs_dir: Path, back_minutes: int) -> Path:
    """A copy of the run folder `source` under `runs_dir`, started `back_minutes` before it, with its own id."""
    text = (source / "run.json").read_text()
    record = json.loads(text)
    shift = dt.timedelta(minutes=back_minutes)
    started = dt.datetime.fromisoformat(record["started"].replace("Z", "+00:00")) - shift
    new_id = f"{started.strftime('%Y%m%dT%H%M%SZ')}-{record['invocation_id'][:8]}"
    dest = runs_dir / new_id
    shutil.copytree(source, dest, copy_function=_link_or_copy, symlinks=True)
    # the old id and the old registry named in paths (outputs, workdir, logs) now name the copy's
    record = json.loads(text.replace(record["run_id"], new_id).replace(str(source.parent.parent),
                                                                       str(runs_dir.parent)))
    for key in ("started", "ended"):
        when = dt.datetime.fromisoformat(record[key].replace("Z", "+00:00")) - shift
        record[key] = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    record["run_uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"snakegate-bench-copy:{new_id}"))
    (dest / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return dest


def make_case(scratch: Scratch, name: str, source: Path, count: int) -> Path:
    """A fresh fan-out registry whose runs/ holds `count` copies of `source`."""
    fan = make_fanout_registry(scratch.fresh(name))
    runs = fan.root / "runs"
    runs.mkdir()
    for i in range(count):
        copy_run(source, runs, back_minutes=i)
    return fan.root


# ---- the measures ---------------------------------------------------------------------------------------------

def commands(root: Path) -> dict[str, list[str]]:
    snakegate = [SNAKEGATE, "--registry", str(root)]
    return {
        "anchor": ["find", "runs", "-mindepth", "2", "-maxdepth", "2", "-name", "run.json", "-exec", "cat", "{}",
                   "+"],
        "runs_limit_10": snakegate + ["runs", "--limit", "10"],
        "runs": snakegate + ["runs"],
        "history": [PYTHON, "-c", HISTORY, str(root)],
    }


def bytes_read(root: Path, which: str) -> int | None:
    """rchar of one `snakegate runs` or one history build, run in this bench's reporting wrapper."""
    cmd = ([PYTHON, "-c", READ_BYTES, "-c", HISTORY, str(root)] if which == "history"
           else [PYTHON, "-c", READ_BYTES, "cli", "--registry", str(root), "runs"])
    proc = subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("RCHAR ")]
    return int(found[-1]) if found else None


def listed(root: Path) -> dict:
    """What `snakegate runs --json` lists (not timed): the copies must list as the runs they are, not as
    unreadable or as one run."""
    proc = subprocess.run([SNAKEGATE, "--registry", str(root), "runs", "--json"], cwd=root, capture_output=True,
                          text=True)
    try:
        runs = json.loads(proc.stdout)["runs"]
    except (ValueError, KeyError, TypeError):
        return {"exit": proc.returncode, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    statuses: dict[str, int] = {}
    for row in runs:
        statuses[str(row.get("status"))] = statuses.get(str(row.get("status")), 0) + 1
    return {"exit": proc.returncode, "listed": len(runs), "distinct_ids": len({r.get("run_id") for r in runs}),
            "statuses": statuses, "with_note": sum(1 for r in runs if r.get("note"))}


def record_bytes(root: Path) -> dict:
    runs = [p for p in (root / "runs").iterdir() if p.is_dir()]
    return {"runs": len(runs),
            "run_json": sum((p / "run.json").stat().st_size for p in runs),
            "prov_json": sum((p / "prov.json").stat().st_size for p in runs if (p / "prov.json").exists())}


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["exit"] == 0]
    out = {"failed": len(rows) - len(ok)}
    for key in ("wall_s", "cpu_s"):
        values = [r[key] for r in ok]
        out[key] = {"min": r3(min(values)) if values else None, "median": r3(median(values))}
    out["peak_mib"] = round(max((r["peak_mib"] for r in ok), default=0), 1)
    return out


def measure_case(root: Path, reps: int) -> dict:
    cmds = commands(root)
    for cmd in cmds.values():  # warm the disk cache and the .pyc files; not recorded
        measured(cmd, root)
    timings: dict[str, list[dict]] = {name: [] for name in cmds}
    loads = [round(load_average(), 2)]
    for _ in range(reps):
        for name, cmd in cmds.items():
            timings[name].append(measured(cmd, root))
    loads.append(round(load_average(), 2))
    out = {name: summary(rows) for name, rows in timings.items()}
    anchor = out["anchor"]["wall_s"]["median"]
    for name in ("runs_limit_10", "runs", "history"):
        wall = out[name]["wall_s"]["median"]
        out[name]["ratio_to_anchor"] = r3(wall / anchor) if wall is not None and anchor else None
        out[name]["met"] = wall is not None and wall <= TARGET_S and not out[name]["failed"]
    out["load"] = loads
    out["listed"] = listed(root)
    out["bytes"] = {**record_bytes(root), "read_by_runs": bytes_read(root, "runs"),
                    "read_by_history": bytes_read(root, "history")}
    return out


# ---- the table ------------------------------------------------------------------------------------------------

LABELS = {"runs_limit_10": "snakegate runs --limit 10", "runs": "snakegate runs", "history": "chat history"}


def print_case(name: str, case: dict) -> None:
    a = case["anchor"]
    print(f"\n{name} (load {case['load'][0]}..{case['load'][-1]}); anchor find+cat run.json: wall "
          f"{a['wall_s']['median']} s (min {a['wall_s']['min']}), CPU {a['cpu_s']['median']} s")
    print(f"  {'measure':<26} {'wall med':>9} {'wall min':>9} {'CPU med':>8} {'peak MiB':>9} {'ratio':>7}  target")
    for key, label in LABELS.items():
        m = case[key]
        met = "met" if m["met"] else "NOT met"
        print(f"  {label:<26} {m['wall_s']['median']:>9} {m['wall_s']['min']:>9} {m['cpu_s']['median']:>8} "
              f"{m['peak_mib']:>9} {m['ratio_to_anchor']:>7}  <= {TARGET_S} s: {met}"
              + (f" ({m['failed']} failed)" if m["failed"] else ""))
    print(f"  listed: {case['listed']}")
    b = case["bytes"]
    print(f"  bytes: every run.json {b['run_json']:,}, every prov.json {b['prov_json']:,}; read by `runs` "
          f"{b['read_by_runs']:,}, by the history {b['read_by_history']:,} (Python's modules included)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="10 and 100 runs, no 10,000-job run")
    args = ap.parse_args()
    report = {"machine": machine(), "reps": args.reps, "quick": args.quick, "target_s": TARGET_S,
              "load_at_start": round(load_average(), 2), "cases": {},
              "copies": "one real run per kind, copied (big files hard-linked) with a new run id per copy"}
    scratch = Scratch()
    try:
        small = real_run(scratch, 1)
        cases = [("10 runs", small, 10), ("100 runs" if args.quick else "1,000 runs", small, 100 if args.quick
                                          else 1000)]
        if not args.quick:
            cases.append((f"ten {BIG_JOBS:,}-job runs", real_run(scratch, BIG_JOBS), 10))
        for name, source, count in cases:
            print(f"  copying {count} runs for `{name}` ...", flush=True)
            root = make_case(scratch, name.replace(" ", "-").replace(",", ""), source, count)
            report["cases"][name] = measure_case(root, args.reps)
            print_case(name, report["cases"][name])
    finally:
        scratch.close()
    report["load_at_end"] = round(load_average(), 2)
    path = BENCH / ("results-history-quick.json" if args.quick else "results-history.json")
    write_results(report, path)
    print(f"\nwrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
