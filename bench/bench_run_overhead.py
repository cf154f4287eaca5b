"""Fixed cost of one `snakegate run` (issue 30): a tiny workflow, run side by side with plain `snakemake`.

The fan-out workflow at `--jobs` jobs (default 1: the fixed cost alone) runs as `snakegate run` and as
plain `snakemake` on the same Snakefile and params, interleaved (plain, gated, plain, gated ...), each in a
fresh process. For each run the wall time and the CPU time (user + system of the whole process tree,
from the kernel's accounting of reaped children) and the peak RSS of the largest process are taken; the
table gives the medians, the fixed cost (gated minus plain) and the ratio, with the load average, since
the machine is shared. `--jobs 10000 --reps 1` gives the memory at 10,000 jobs. Also: the CPU time of
importing the front end's run path alone (`import snakegate.run.runner`), the part of the fixed cost that
lazy imports cut.

    python bench/bench_run_overhead.py [--jobs 1] [--reps 5] [--width 100] [--json]

Writes nothing outside a scratch folder, removed at the end. Prints a table; never asserts.
"""

from __future__ import annotations

import argparse
import json
import sys

from common import (PYTHON, REPO, SNAKEGATE, SNAKEMAKE, Scratch, load_average, make_fanout_registry, measured,
                    median, r3)

FIXED_TARGET_S = 0.3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--width", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    scratch = Scratch()
    try:
        fan = make_fanout_registry(scratch.fresh("overhead"))
        run_config, params = fan.run_config(args.jobs, args.width), fan.params_file(args.jobs, args.width)
        loads = [load_average()]
        plain, gated = [], []
        for _ in range(args.reps):
            workdir = scratch.fresh("plain")
            plain.append(measured([SNAKEMAKE, "-s", str(fan.snakefile), "--configfile", str(params), "-d",
                                   str(workdir), "--cores", "2"], fan.root))
            gated.append(measured([SNAKEGATE, "--registry", str(fan.root), "run", str(run_config), "--cores", "2"],
                                  fan.root))
            loads.append(load_average())
        imports = [measured([PYTHON, "-c", "import snakegate.run.runner"], REPO)["cpu_s"] for _ in range(args.reps)]

        def med(rows, key):
            return median([r[key] for r in rows if r["exit"] == 0])

        result = {"jobs": args.jobs, "reps": args.reps, "load": [round(v, 1) for v in loads],
                  "snakemake": {k: r3(med(plain, k)) for k in ("wall_s", "cpu_s")},
                  "snakegate_run": {k: r3(med(gated, k)) for k in ("wall_s", "cpu_s")},
                  "peak_mib": {"snakemake": round(max(r["peak_mib"] for r in plain), 1),
                               "snakegate_run": round(max(r["peak_mib"] for r in gated), 1)},
                  "failed": {"snakemake": sum(r["exit"] != 0 for r in plain),
                             "snakegate_run": sum(r["exit"] != 0 for r in gated)},
                  "front_end_import_cpu_s": r3(median(imports))}
        for key in ("wall_s", "cpu_s"):
            p, g = med(plain, key), med(gated, key)
            result[f"fixed_{key}"] = r3(g - p) if p is not None and g is not None else None
            result[f"ratio_{key}"] = r3(g / p) if p and g is not None else None
        result["target"] = f"fixed cost <= {FIXED_TARGET_S} s"
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            print(f"fan-out {args.jobs:,} job(s), {args.reps} interleaved pairs, load {result['load'][0]}"
                  f"..{result['load'][-1]}")
            for name in ("snakemake", "snakegate_run"):
                print(f"  {name:<14} wall {result[name]['wall_s']:>7} s   cpu {result[name]['cpu_s']:>7} s   "
                      f"peak {result['peak_mib'][name]:>7} MiB")
            print(f"  fixed cost     wall {result['fixed_wall_s']} s (x{result['ratio_wall_s']})   cpu "
                  f"{result['fixed_cpu_s']} s (x{result['ratio_cpu_s']});  {result['target']}")
            print(f"  front end's run-path imports: {result['front_end_import_cpu_s']} s cpu")
            if any(result["failed"].values()):
                print(f"  failed runs: {result['failed']}")
        return 0
    finally:
        scratch.close()


if __name__ == "__main__":
    sys.exit(main())
