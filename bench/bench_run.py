"""Run overhead (item 3): `snakegate run` vs plain `snakemake` on the fan-out, and the PROV document alone.

Both sides run the same jobs with `--cores 2` and the same Snakemake profile:
plain Snakemake runs the fan-out's own Snakefile standalone (no gate, no
provenance) in a fresh folder; `snakegate run` gates, writes runs/<run_id>/ and
runs the registry's top-level Snakefile (which gates again and records
provenance). The fan-out runs as `width` parallel chains (default 100) and the
profile picks Snakemake's scheduler (default `greedy`): Snakemake scans every
ready job at every scheduling step, so a flat 10,000-job fan-out takes ~20
minutes on 2 cores with either scheduler and ~7 minutes with the ILP scheduler
at width 100, against ~2.5 minutes with these defaults. The same profile and
width go to both sides, so the ratio compares like with like.

The PROV time is `snakegate.provenance.capture.capture(...)` called on a
finished run folder in a fresh process (import time excluded, reported apart).

Run alone: python bench/bench_run.py [--quick]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common import (
    PYTHON, SNAKEGATE, SNAKEMAKE, Scratch, fmt_s, make_fanout_registry, median, r3, run_timed,
)

OVERHEAD_TARGET = 0.10
PROV_TARGET_S = 2.0

# Runs in a fresh process: time capture() on a finished run folder, with the arguments entry.py passes.
_CAPTURE_CHILD = r"""
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
try:
    from snakegate.provenance import capture
except ImportError as exc:
    print(json.dumps({"status": "pending", "why": f"snakegate.provenance.capture is not importable ({exc})"}))
    sys.exit(0)
from snakegate.run.entry import MODULE_PREFIX
from snakegate.registry.workflows import Registry
imported = time.perf_counter() - t0
registry_root, run_dir = Path(sys.argv[1]), Path(sys.argv[2])
wf = Registry.load(registry_root).get("fanout")
log = run_dir / "snakemake.log"
t0, c0 = time.perf_counter(), time.process_time()
try:
    capture.capture(run_dir=run_dir, registry_root=registry_root, workdir=registry_root,
                    manifest=wf.manifest.model_dump(), schema=wf.schema, workflow_folder=wf.folder,
                    snakemake_log=str(log) if log.exists() else None, status="succeeded", rule_prefix=MODULE_PREFIX)
except Exception as exc:
    print(json.dumps({"status": "error", "why": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
files = {p.name: p.stat().st_size for p in run_dir.glob("prov.*")}
print(json.dumps({"status": "measured", "capture_s": wall, "cpu_s": cpu, "import_s": imported, "files": files}))
"""


def _profile(scratch: Scratch, scheduler: str) -> Path:
    folder = scratch.fresh("profile")
    (folder / "config.yaml").write_text(f"scheduler: {scheduler}\n")
    return folder


def _latest_run(runs_dir: Path, before: set[str]) -> Path | None:
    new = sorted(p for p in runs_dir.glob("*") if p.is_dir() and p.name not in before)
    return new[-1] if new else None


def _capture(registry_root: Path, run_dir: Path, timeout: float) -> dict:
    try:
        proc = subprocess.run([PYTHON, "-c", _CAPTURE_CHILD, str(registry_root), str(run_dir)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "error", "why": f"capture took longer than {timeout:.0f} s"}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"status": "error", "why": (proc.stderr or proc.stdout).strip()[-400:]}


def run_overhead(scratch: Scratch, quick: bool, reps: int, scheduler: str = "greedy", width: int = 100,
                 sizes: list[int] | None = None, timeout: float = 600, large_reps: int = 1) -> dict:
    """`reps` pairs per size below 10,000 jobs, `large_reps` at 10,000 and more (a pair there takes ~5 minutes)."""
    sizes = sizes or ([1000] if quick else [1000, 10000])
    print(f"3. run overhead (snakegate run / snakemake, --cores 2, scheduler {scheduler}, width {width}) and PROV",
          flush=True)
    fan = make_fanout_registry(scratch.fresh("fanout-run"))
    profile = _profile(scratch, scheduler)
    runs_dir = fan.root / "runs"
    rows, prov_rows = [], []
    for n in sizes:
        run_config, params = fan.run_config(n, width), fan.params_file(n, width)
        gated_cmd = [SNAKEGATE, "--registry", str(fan.root), "run", str(run_config), "--cores", "2",
                     "--profile", str(profile)]
        plain, gated, problems, captures = [], [], [], []
        n_reps = reps if n < 10000 else large_reps
        for _ in range(n_reps):
            workdir = scratch.fresh(f"plain-{n}")
            plain_cmd = [SNAKEMAKE, "-s", str(fan.snakefile), "--configfile", str(params), "-d", str(workdir),
                         "--cores", "2", "--profile", str(profile)]
            wall, code, tail = run_timed(plain_cmd, cwd=fan.root, timeout=timeout)
            (plain if code == 0 else problems).append(wall if code == 0 else f"snakemake exit {code}: {tail}")
            before = {p.name for p in runs_dir.glob("*")} if runs_dir.is_dir() else set()
            wall, code, tail = run_timed(gated_cmd, cwd=fan.root, timeout=timeout)
            (gated if code == 0 else problems).append(wall if code == 0 else f"snakegate run exit {code}: {tail}")
            run_dir = _latest_run(runs_dir, before) if runs_dir.is_dir() else None
            if code == 0 and run_dir is not None:
                captures.append(_capture(fan.root, run_dir, timeout))
        p, g = median(plain), median(gated)
        overhead = (g - p) / p if p and g is not None else None
        row = {"case": f"fanout {n:,} jobs", "snakemake_s": r3(p), "snakegate_run_s": r3(g),
               "overhead": r3(overhead), "runs": n_reps, "scheduler": scheduler, "width": width,
               "snakemake_walls_s": [r3(w) for w in plain], "snakegate_run_walls_s": [r3(w) for w in gated],
               "target": f"overhead <= {OVERHEAD_TARGET:.0%}",
               "met": overhead is not None and overhead <= OVERHEAD_TARGET}
        if problems:
            row["problems"] = problems[:3]
        rows.append(row)
        print(f"  {row['case']:<20} snakemake {fmt_s(p):>9}   snakegate run {fmt_s(g):>9}   overhead "
              f"{'–' if overhead is None else f'{overhead:+.0%}'}", flush=True)

        measured = [c for c in captures if c.get("status") == "measured"]
        if measured:
            wall = median([c["capture_s"] for c in measured])
            prov = {"case": f"fanout {n:,} jobs", "status": "measured", "capture_s": r3(wall),
                    "import_s": r3(median([c["import_s"] for c in measured])), "files": measured[-1]["files"],
                    "runs": len(measured), "target": f"<= {PROV_TARGET_S:.0f} s at 10,000 jobs",
                    "met": wall <= PROV_TARGET_S}
        else:
            why = captures[-1].get("why") if captures else "no finished run to capture"
            status = captures[-1].get("status", "error") if captures else "error"
            prov = {"case": f"fanout {n:,} jobs", "status": status, "why": why, "met": None}
        prov_rows.append(prov)
        if prov["status"] == "measured" and p and g is not None:
            # the same capture runs inside `snakegate run` (onsuccess): what the rest of snakegate costs
            row["prov_capture_s"] = prov["capture_s"]
            row["overhead_without_prov"] = r3((g - prov["capture_s"] - p) / p)
        print(f"  {'PROV ' + prov['case']:<20} " + (f"capture {fmt_s(prov['capture_s'])}" if prov["status"] == "measured"
                                                  else f"{prov['status']}: {prov['why']}"), flush=True)
    return {"rows": rows, "prov": prov_rows, "scheduler": scheduler, "width": width,
            "target": f"overhead <= {OVERHEAD_TARGET:.0%}; PROV <= {PROV_TARGET_S:.0f} s at 10,000 jobs"}


def prov_capture(scratch: Scratch, quick: bool, reps: int, scheduler: str = "greedy", width: int = 100,
                 sizes: list[int] | None = None, timeout: float = 900) -> dict:
    """PROV capture alone: one `snakegate run` of the fan-out per size (no plain-Snakemake baseline), then
    `capture()` `reps` times on its finished run folder, each in a fresh process; the median is reported."""
    sizes = sizes or ([1000] if quick else [1000, 10000])
    print(f"PROV capture on a finished fan-out run (median of {reps} captures, each in a fresh process)", flush=True)
    fan = make_fanout_registry(scratch.fresh("fanout-prov"))
    profile = _profile(scratch, scheduler)
    runs_dir = fan.root / "runs"
    rows = []
    for n in sizes:
        before = {p.name for p in runs_dir.glob("*")} if runs_dir.is_dir() else set()
        wall, code, tail = run_timed([SNAKEGATE, "--registry", str(fan.root), "run", str(fan.run_config(n, width)),
                                      "--cores", "2", "--profile", str(profile)], cwd=fan.root, timeout=timeout)
        run_dir = _latest_run(runs_dir, before) if runs_dir.is_dir() else None
        if code != 0 or run_dir is None:
            rows.append({"case": f"fanout {n:,} jobs", "status": "error", "why": f"snakegate run exit {code}: {tail}",
                         "met": None})
            continue
        captures = [_capture(fan.root, run_dir, timeout) for _ in range(reps)]
        measured = [c for c in captures if c.get("status") == "measured"]
        if not measured:
            rows.append({"case": f"fanout {n:,} jobs", "status": "error", "why": captures[-1].get("why"), "met": None})
            continue
        wall = median([c["capture_s"] for c in measured])
        rows.append({"case": f"fanout {n:,} jobs", "status": "measured", "capture_s": r3(wall),
                     "captures_s": [r3(c["capture_s"]) for c in measured],
                     "cpu_s": r3(median([c["cpu_s"] for c in measured])),
                     "import_s": r3(median([c["import_s"] for c in measured])), "files": measured[-1]["files"],
                     "runs": len(measured), "target": f"<= {PROV_TARGET_S:.0f} s at 10,000 jobs",
                     "met": wall <= PROV_TARGET_S if n >= 10000 else None})
        print(f"  {'PROV fanout ' + f'{n:,}':<20} capture {fmt_s(wall)} "
              f"({', '.join(fmt_s(c['capture_s']) for c in measured)}; CPU {fmt_s(rows[-1]['cpu_s'])})", flush=True)
    return {"rows": rows, "target": f"PROV <= {PROV_TARGET_S:.0f} s at 10,000 jobs"}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    scratch = Scratch()
    try:
        out = run_overhead(scratch, quick, reps=1 if quick else 3)
    finally:
        scratch.close()
    print(json.dumps(out, indent=2))
