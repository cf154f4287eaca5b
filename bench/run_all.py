"""Run the snakegate benchmarks, print one table, write bench/results.json (and the table in bench/README.md).

    python bench/run_all.py                 # full: waits for a quiet machine, 3+ runs each, up to 10,000 jobs
    python bench/run_all.py --quick         # development: 1 run each, no 10,000-job cases -> results-quick.json
    python bench/run_all.py --only gate,warm       # some sections; the others keep their last results

Sections: gate (snakegate validate vs snakemake -n), warm (in-process gate()),
run (snakegate run vs snakemake, PROV capture), prov (PROV capture alone, median
of 3 on one finished run per size), check (snakegate check), tui.
A full run merges its sections into bench/results.json and rewrites the table
between the markers in bench/README.md. Nothing here fails on a missed
target: the table says which targets are met.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time

from common import (
    BENCH, RESULTS, Scratch, fmt_ratio, fmt_s, load_average, machine, read_results, wait_until_quiet,
    write_results,
)

SECTIONS = ("gate", "warm", "run", "prov", "check", "tui", "jobgate")
README = BENCH / "README.md"
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"
TUI_MISSING = {"status": "not measured", "why": "run `python bench/run_all.py --only tui`"}


def _jobs(row: dict) -> int:
    return int(re.sub(r"[^0-9]", "", row["case"]) or 0)


def _met(value) -> str:
    return {True: "yes", False: "**no**", None: "–"}[value]


def table(results: dict) -> str:
    """The results as one Markdown table (the same text is printed and pasted into READMEs)."""
    lines = ["| Measure | Case | snakegate | baseline | ratio | target | met |",
             "|---|---|---:|---:|---:|---|---|"]
    for row in results.get("gate_vs_dry_run", {}).get("rows", []):
        if "ratio" not in row:
            lines.append(f"| gate vs dry run | {row['case']} | – | – | – | ≤ 1.0 | {'; '.join(row.get('problems', []))} |")
            continue
        lines.append(f"| gate vs dry run | {row['case']} | {fmt_s(row['validate_s'])} | {fmt_s(row['dry_run_s'])} | "
                     f"{fmt_ratio(row['ratio'])} | ≤ 1.0 | {_met(row['met'])} |")
    for row in results.get("warm_gate", {}).get("rows", []):
        if "warm_median_s" not in row:
            lines.append(f"| warm validate_params | {row['case']} | – | – | – | ≤ 50 ms | {'; '.join(row.get('problems', []))} |")
            continue
        lines.append(f"| warm validate_params | {row['case']} | {row['warm_median_s'] * 1000:.1f} ms | "
                     f"cold {fmt_s(row['cold_s'])} | – | ≤ 50 ms | {_met(row['met'])} |")
    run = results.get("run_overhead", {})
    for row in run.get("rows", []):
        overhead = row.get("overhead")
        lines.append(f"| run overhead | {row['case']} | {fmt_s(row.get('snakegate_run_s'))} | "
                     f"{fmt_s(row.get('snakemake_s'))} | {'–' if overhead is None else f'{overhead:+.0%}'} | ≤ +10 % | "
                     f"{_met(row.get('met'))} |")
        rest = row.get("overhead_without_prov")
        if rest is not None:
            lines.append(f"| run overhead without PROV (estimate) | {row['case']} | "
                         f"{fmt_s(row['snakegate_run_s'] - row['prov_capture_s'])} | {fmt_s(row['snakemake_s'])} | "
                         f"{rest:+.0%} | – | – |")
    # the prov section (3 captures of one run) when it was measured, else the run section's single capture
    for row in results.get("prov_capture", {}).get("rows") or run.get("prov", []):
        if row["status"] == "measured":
            is_target = "10,000" in row["case"]
            cpu = f"CPU {fmt_s(row['cpu_s'])}" if row.get("cpu_s") is not None else "–"
            lines.append(f"| PROV capture | {row['case']} | {fmt_s(row['capture_s'])} | {cpu} | – | "
                         f"{'≤ 2 s' if is_target else '–'} | {_met(row['met']) if is_target else '–'} |")
        else:
            lines.append(f"| PROV capture | {row['case']} | {row['status']} | – | – | ≤ 2 s at 10,000 | {row['why']} |")
    check = results.get("registry_check", {})
    if check.get("status") == "pending":
        lines.append(f"| snakegate check | – | pending | – | – | – | {check['why']} |")
    for row in check.get("rows", []):
        lines.append(f"| snakegate check | {row['case']} | {fmt_s(row['check_s'])} | – | – | – | "
                     f"exit {', '.join(str(c) for c in row['exit_codes'])} |")
    jobgate = results.get("job_gate", {})
    for row in jobgate.get("rows", []):
        if row.get("status") == "not measured":
            lines.append(f"| job-side gate | {row['case']} | not measured | – | – | ≤ 0.2 s per job | {row['why']} |")
            continue
        lines.append(f"| job-side gate | {row['case']} | {fmt_s(row['median_s'])} (max {fmt_s(row['max_s'])}) | "
                     f"full gate {fmt_s(row['full_gate_s'])} | – | ≤ 0.2 s per job | {_met(row['met'])} |")
    tui = results.get("tui_start", TUI_MISSING)
    if tui.get("status") == "measured":
        lines.append(f"| TUI first paint | snakegate chat --guided, cold (pilot) | {fmt_s(tui['cold_s'])} | – | – | "
                     f"≤ 0.5 s | {_met(tui['met'])} |")
        if tui.get("cold_greeting_s") is not None:
            lines.append(f"| TUI greeting (registry loaded) | same, cold | {fmt_s(tui['cold_greeting_s'])} | – | – | – | – |")
        lines.append(f"| TUI first paint | same, in a real terminal | {fmt_s(tui['cold_terminal_s'])} | – | – | – | – |")
        lines.append(f"| TUI first paint | warm (in-process) | {fmt_s(tui['warm_s'])} | – | – | – | – |")
    else:
        lines.append(f"| TUI first paint | snakegate chat | {tui['status']} | – | – | – | {tui['why']} |")
    return "\n".join(lines)


def machine_line(results: dict) -> str:
    m = results.get("machine", {})
    loads = [results[k]["load"][e] for k in ("gate_vs_dry_run", "warm_gate", "run_overhead", "prov_capture",
                                             "registry_check", "tui_start", "job_gate")
             if isinstance(results.get(k, {}).get("load"), dict) for e in ("start", "end")]
    span = f"{min(loads):.2f}–{max(loads):.2f}" if loads else "?"
    return (f"Measured on {results.get('measured_on', '?')}: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, "
            f"{m.get('ram_gib', '?')} GiB RAM, {m.get('os', '?')}, Python {m.get('python', '?')}, "
            f"Snakemake {m.get('snakemake', '?')}; 1-minute load average {span} at the start and end of the "
            f"sections (other work was running when above ~1), {'quick' if results.get('quick') else 'full'} run.")


def update_readme(results: dict) -> None:
    text = README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"note: {README} has no {START} … {END} markers; table not written there", file=sys.stderr)
        return
    block = f"{START}\n{table(results)}\n\n{machine_line(results)}\n{END}"
    README.write_text(re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _m: block, text, flags=re.S),
                      encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run each, no 10,000-job cases; writes results-quick.json")
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections ({', '.join(SECTIONS)})")
    ap.add_argument("--reps", type=int, help="runs per measurement (default 3; 1 with --quick)")
    ap.add_argument("--run-reps", type=int, help="run pairs per fan-out size below 10,000 jobs (default: --reps)")
    ap.add_argument("--run-reps-large", type=int, default=1,
                    help="run pairs at 10,000 jobs (default 1: one pair takes ~5 minutes on 2 cores)")
    ap.add_argument("--max-load", type=float, default=1.5, help="wait until the 1-min load average is below this")
    ap.add_argument("--max-wait", type=float, default=1800, help="give up waiting after this many seconds, run anyway")
    ap.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    ap.add_argument("--scheduler", default="greedy", choices=("greedy", "ilp"),
                    help="Snakemake scheduler for the run-overhead section (both sides; default greedy)")
    ap.add_argument("--width", type=int, default=100,
                    help="fan-out width (parallel chains) for the run-overhead section (default 100; 0 = flat)")
    ap.add_argument("--run-sizes", help="comma-separated fan-out sizes for the run section (default 1000,10000; "
                                        "1000 with --quick)")
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    reps = args.reps or (1 if args.quick else 3)
    run_reps = args.run_reps or reps

    if args.quick or args.no_wait:
        load = {"load_at_start": round(load_average(), 2), "waited_s": 0, "quiet": load_average() < args.max_load,
                "max_load": args.max_load}
    else:
        load = wait_until_quiet(args.max_load, args.max_wait)
    target = RESULTS.with_name("results-quick.json") if args.quick else RESULTS
    results = {} if args.quick else read_results()
    results.update({"measured_on": datetime.date.today().isoformat(), "machine": machine(), "load": load,
                    "quick": args.quick})
    started = time.monotonic()
    scratch = Scratch()
    try:
        def timed(key: str, make) -> None:
            # each section keeps the load it ran under: sections are often re-run alone
            before, t0 = round(load_average(), 2), time.monotonic()
            section = make()
            section["load"] = {"start": before, "end": round(load_average(), 2),
                               "wall_s": round(time.monotonic() - t0, 1)}
            results[key] = section

        if "gate" in only:
            from bench_gate import gate_vs_dry_run
            timed("gate_vs_dry_run", lambda: gate_vs_dry_run(scratch, args.quick, reps, timeout=600))
        if "warm" in only:
            from bench_gate import warm_gate
            timed("warm_gate", lambda: warm_gate(args.quick, calls=10 if args.quick else 50))
        if "run" in only:
            from bench_run import run_overhead
            sizes = [int(x) for x in args.run_sizes.split(",")] if args.run_sizes else None

            def run_section():
                section = run_overhead(scratch, args.quick, run_reps, args.scheduler, args.width, sizes,
                                       timeout=600, large_reps=args.run_reps_large)
                if sizes and not args.quick:  # a partial re-run replaces only its own sizes
                    old = results.get("run_overhead", {})
                    mine = {x["case"] for x in section["rows"]}
                    section["rows"] = sorted([r for r in old.get("rows", []) if r["case"] not in mine]
                                             + section["rows"], key=_jobs)
                    section["prov"] = sorted([r for r in old.get("prov", []) if r["case"] not in mine]
                                             + section["prov"], key=_jobs)
                return section
            timed("run_overhead", run_section)
        if "prov" in only:
            from bench_run import prov_capture
            sizes = [int(x) for x in args.run_sizes.split(",")] if args.run_sizes else None
            timed("prov_capture", lambda: prov_capture(scratch, args.quick, reps, args.scheduler, args.width, sizes))
        if "check" in only:
            from bench_check import registry_check
            timed("registry_check", lambda: registry_check(args.quick, reps, timeout=600))
        if "tui" in only:
            from bench_tui import tui_first_paint
            timed("tui_start", lambda: tui_first_paint(args.quick, reps=max(5, reps)))
        if "jobgate" in only:
            from bench_jobgate import job_gate
            timed("job_gate", lambda: job_gate(scratch, args.quick))
    finally:
        scratch.close()
    results["load"]["load_at_end"] = round(load_average(), 2)
    results["load"]["bench_wall_s"] = round(time.monotonic() - started, 1)
    write_results(results, target)
    print()
    print(table(results))
    print()
    print(machine_line(results))
    print(f"\nwrote {target.relative_to(BENCH.parent)}")
    if not args.quick:
        update_readme(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
