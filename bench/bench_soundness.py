"""Gate soundness, measured: how many gate-accepted configs fail in a job, and why.

For every workflow, hypothesis (fixed seed) draws run configs over its contract with real inputs made from
the demo data (tests/soundness_draws.py: table row subsets, rare classes, gaps, stray text, infinity,
column subsets; cropped detector stacks; reference, reads, VCF and GFF3 variants). Each draw is gated
in-process as `snakegate validate` gates it; the refused ones are counted by refusal code; each accepted
one, up to --per-workflow, is run with `snakegate run` (real Snakemake, one run folder each), and its
record says whether it succeeded or which rule failed with which error. Failures are grouped by kind (the
error with numbers, quoted values and paths taken out). The target is no failure a gate could have known.

Prints one table and the failure kinds; merges the section `soundness` into bench/results.json (not
with --quick). The exit code is 1 when an accepted config failed.

    python bench/bench_soundness.py                         # 12 runs per workflow (9 min on 2 cores at load 3-4)
    python bench/bench_soundness.py --quick                 # 2 runs per workflow
    python bench/bench_soundness.py --workflows pump-probe --per-workflow 30
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from common import REPO, Scratch, load_average, machine, read_results, write_results

sys.path.insert(0, str(REPO / "tests"))


def measure(workflow: str, per_workflow: int, tries: int, seed: int, cores: int, scratch: Scratch,
            echo=print) -> dict:
    from soundness_draws import SoundRegistry, accepted, run_draw

    reg = SoundRegistry.make(scratch.fresh(workflow), (workflow,))
    outcomes = []

    def run(config):
        started = time.perf_counter()
        outcome = run_draw(reg, config, cores=cores)
        outcomes.append(outcome)
        echo(f"  {workflow} #{len(outcomes)}: {outcome.status}"
             f"{f' in {outcome.rule}: {outcome.error[:160]}' if outcome.status != 'succeeded' else ''}"
             f" ({time.perf_counter() - started:.0f} s)")

    tally, codes, _ = accepted(reg, workflow, per_workflow, seed, tries, on_accepted=run)
    status = collections.Counter(o.status for o in outcomes)
    kinds: dict[tuple, dict] = {}
    for o in outcomes:
        if o.status != "succeeded":
            entry = kinds.setdefault((o.status, o.rule, o.kind), {"status": o.status, "rule": o.rule, "kind": o.kind,
                                                                  "count": 0, "error": o.error, "config": o.config})
            entry["count"] += 1
    return {"drawn": tally["drawn"], "refused": tally["refused"], "accepted_again": tally["repeated"],
            "accepted_and_run": len(outcomes), "succeeded": status["succeeded"],
            "failed_in_a_job": status["failed"], "refused_at_run": status["refused_at_run"], "other": status["error"],
            "refusal_codes": dict(codes.most_common()), "failure_kinds": list(kinds.values())}


def report(section: dict) -> None:
    print(f"\nGate soundness ({section['measured_on']}, load {section['load_at_start']:.1f} -> "
          f"{section['load_at_end']:.1f} on {section['machine']['cores']} cores, seed {section['seed']})")
    print(f"{'workflow':<22} {'drawn':>6} {'refused':>8} {'run':>5} {'ok':>5} {'failed':>7}  refusal codes")
    for wf, r in section["workflows"].items():
        print(f"{wf:<22} {r['drawn']:>6} {r['refused']:>8} {r['accepted_and_run']:>5} {r['succeeded']:>5} "
              f"{r['failed_in_a_job'] + r['refused_at_run'] + r['other']:>7}  "
              + ", ".join(f"{k} {v}" for k, v in r["refusal_codes"].items()))
    for wf, r in section["workflows"].items():
        for kind in r["failure_kinds"]:
            print(f"  FAILED {wf} {kind['rule']} x{kind['count']} ({kind['status']}): {kind['error'][:300]}")
            print(f"    e.g. {kind['config']}")


def main(argv: list[str] | None = None) -> int:
    from soundness_draws import WORKFLOWS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-workflow", type=int, default=None,
                    help="accepted configs to run per workflow (12; 2 with --quick)")
    ap.add_argument("--tries", type=int, default=400, help="draws per workflow at most (400)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (0: the same draws every run)")
    ap.add_argument("--cores", type=int, default=2, help="--cores of each snakegate run (2)")
    ap.add_argument("--workflows", default=",".join(WORKFLOWS), help="comma-separated ids (all seven)")
    ap.add_argument("--quick", action="store_true", help="2 runs per workflow unless told; results.json is left alone")
    args = ap.parse_args(argv)
    per = args.per_workflow or (2 if args.quick else 12)
    scratch = Scratch()
    section = {"measured_on": time.strftime("%Y-%m-%d"), "load_at_start": load_average(), "seed": args.seed,
               "per_workflow": per, "machine": machine(), "workflows": {}}
    started = time.perf_counter()
    try:
        for wf in args.workflows.split(","):
            print(f"{wf}: drawing until {per} accepted configs ran (at most {args.tries} draws)", flush=True)
            section["workflows"][wf] = measure(wf, per, args.tries, args.seed, args.cores, scratch,
                                               echo=lambda line: print(line, flush=True))
    finally:
        scratch.close()
    section["load_at_end"] = load_average()
    section["wall_s"] = round(time.perf_counter() - started)
    report(section)
    if not args.quick:
        results = read_results()
        results["soundness"] = section
        write_results(results)
    failed = sum(r["failed_in_a_job"] + r["refused_at_run"] + r["other"] for r in section["workflows"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
