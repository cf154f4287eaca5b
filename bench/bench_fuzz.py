"""Gate fuzzer at scale: 10,000 hypothesis-made run configs across every workflow, and the bomb timings.

Each example is drawn from a workflow's schema.json (valid, boundary, wrong-type, unknown-key and hostile
values; paths inside and outside the data roots, through symlinks; some through YAML text, about 2 % with
the DAG step) and judged by the independent oracle in tests/config_fuzz.py. Prints examples tried,
accepted, refused, exceptions and unjustified acceptances (both must be 0), the refusal codes, and how long
a ~1 KB YAML alias bomb takes to be refused: read by snakegate, handed over in memory the way Snakemake's
loader shares aliases, and through plain `snakemake --configfile` (a whole process). Merges the section
`gate_fuzz` into bench/results.json (not with --quick).

    python bench/bench_fuzz.py                 # 10,000 examples (~5 min on 2 cores)
    python bench/bench_fuzz.py --examples 500  # development
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, Scratch, fmt_s, machine, read_results, write_results

sys.path.insert(0, str(REPO / "tests"))


def fuzz(examples: int, seed: int, scratch: Scratch) -> dict:
    from hypothesis import HealthCheck, Phase, given, settings, strategies as st
    from hypothesis import seed as hypothesis_seed

    from config_fuzz import FuzzRegistry, Oracle, fuzz_one, run_configs

    fz = FuzzRegistry.make(scratch.fresh("fuzz"))
    oracle = Oracle(fz)
    kinds: collections.Counter = collections.Counter()
    per_workflow: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    codes: collections.Counter = collections.Counter()
    routes: collections.Counter = collections.Counter()
    findings: list[dict] = []
    preflight_crashes: list[str] = []

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data):
        example = data.draw(run_configs(fz))
        outcome = fuzz_one(fz, oracle, example)
        kinds[outcome.kind] += 1
        per_workflow[outcome.workflow][outcome.kind] += 1
        codes.update(outcome.codes)
        routes["yaml text" if example["text"] is not None else "in memory"] += 1
        routes["with the DAG step"] += example["dag"]
        if outcome.kind in ("exception", "unjustified") and len(findings) < 20:
            findings.append({"kind": outcome.kind, "workflow": outcome.workflow, "detail": outcome.detail,
                             "example": repr(example)[:2000]})
        if outcome.detail and outcome.kind == "refused" and len(preflight_crashes) < 20:
            preflight_crashes.append(outcome.detail)

    started = time.perf_counter()
    one()
    wall = time.perf_counter() - started
    tried = sum(kinds.values())
    return {"examples_tried": tried, "accepted": kinds["accepted"], "refused": kinds["refused"],
            "exceptions": kinds["exception"], "unjustified_acceptances": kinds["unjustified"],
            "workflows": {wf: dict(c) for wf, c in sorted(per_workflow.items())},
            "refusal_codes": dict(codes.most_common()), "routes": dict(routes), "wall_s": round(wall, 1),
            "per_example_ms": round(wall / max(tried, 1) * 1000, 1), "seed": seed, "findings": findings,
            "preflight_crashes": preflight_crashes}


def bomb_timings(scratch: Scratch) -> dict:
    """A 1 KB alias bomb: snakegate's reader, the in-memory gate step, and plain snakemake end to end."""
    from registry_copies import make_registry
    from test_config_hostile import OPEN_NOTE, bomb

    from snakegate.gate.prove import gate
    from snakegate.registry.workflows import Registry
    from snakegate.config.read import read_run_config
    from snakegate.registry.settings import load_settings

    root = make_registry(scratch.fresh("bomb") / "registry", {"open-note": OPEN_NOTE})
    path = root / "bomb.yaml"
    path.write_text(bomb())
    started = time.perf_counter()
    _, error = read_run_config(path)
    read_s = time.perf_counter() - started
    shared: list = ["lol"] * 9
    for _ in range(8):
        shared = [shared] * 9
    registry, settings = Registry.load(root), load_settings(root)
    started = time.perf_counter()
    result = gate(registry, {"workflow": "open-note", "params": {"note": shared}}, settings, check_dag=False)
    memory_s = time.perf_counter() - started
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(path), "--cores", "1"], cwd=root,
                          capture_output=True, text=True, timeout=600)
    plain_s = time.perf_counter() - started
    good = root / "good.yaml"
    good.write_text("workflow: open-note\nparams:\n  note: fine\n")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(good), "--cores", "1", "-n"], cwd=root,
                   capture_output=True, text=True, timeout=600)
    baseline_s = time.perf_counter() - started
    return {"bytes": len(bomb()), "expanded_values": 9 ** 9,
            "read_run_config_s": round(read_s, 4), "read_code": error.code if error else None,
            "gate_in_memory_s": round(memory_s, 4), "gate_code": result.errors[0].code if result.errors else None,
            "plain_snakemake_s": round(plain_s, 2), "plain_snakemake_refused": "[yaml_bomb]" in proc.stdout + proc.stderr,
            "plain_snakemake_dry_run_of_a_good_config_s": round(baseline_s, 2)}


def report(section: dict) -> None:
    f, b = section["fuzz"], section["bomb"]
    print(f"gate fuzzer: {f['examples_tried']:,} examples tried in {f['wall_s']} s ({f['per_example_ms']} ms each), "
          f"seed {f['seed']}")
    print(f"  accepted {f['accepted']:,} · refused {f['refused']:,} · exceptions {f['exceptions']} · "
          f"unjustified acceptances {f['unjustified_acceptances']}")
    print(f"  routes: {', '.join(f'{k} {v:,}' for k, v in f['routes'].items())}")
    for wf, counts in f["workflows"].items():
        print(f"  {wf:<24} " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
    print("  refusal codes: " + ", ".join(f"{k} {v:,}" for k, v in f["refusal_codes"].items()))
    for finding in f["findings"]:
        print(f"  FINDING {finding['kind']} ({finding['workflow']}): {finding['detail'][-800:]}")
    for crash in sorted(set(f["preflight_crashes"])):
        print(f"  preflight crash (refused, fail closed): {crash}")
    print(f"1 KB alias bomb ({b['bytes']} bytes, {b['expanded_values']:,} values expanded): "
          f"read_run_config {fmt_s(b['read_run_config_s'])} ({b['read_code']}), in-memory gate "
          f"{fmt_s(b['gate_in_memory_s'])} ({b['gate_code']}), plain snakemake {fmt_s(b['plain_snakemake_s'])} "
          f"(refused: {b['plain_snakemake_refused']}; its dry run of a good config: "
          f"{fmt_s(b['plain_snakemake_dry_run_of_a_good_config_s'])})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=10_000, help="run configs to draw (default 10,000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0: the same examples every run)")
    ap.add_argument("--quick", action="store_true", help="500 examples; results.json is left alone")
    args = ap.parse_args(argv)
    examples = 500 if args.quick else args.examples
    scratch = Scratch()
    try:
        section = {"fuzz": fuzz(examples, args.seed, scratch), "bomb": bomb_timings(scratch),
                   "measured_on": time.strftime("%Y-%m-%d"), "machine": machine()}
    finally:
        scratch.close()
    report(section)
    if not args.quick:
        results = read_results()
        results["gate_fuzz"] = section
        write_results(results)
    clean = section["fuzz"]["exceptions"] == 0 and section["fuzz"]["unjustified_acceptances"] == 0
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
