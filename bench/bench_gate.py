"""Gate cost: `snakegate validate` vs `snakemake -n` (items 1) and the warm in-process gate (item 2).

Item 1 compares two fresh processes on the same config: the gate (schema, data
checks, Snakemake DAG) against the dry run a careful user already pays, for the
first example of every curated workflow and for the synthetic fan-out. Runs are
interleaved (gate, dry run, gate, ...) so a change of machine load hits both.

Item 2 is `validate_params` as the agent calls it: `gate()` repeated in one
process on an already-loaded registry (the first call, which builds the DAG,
is reported apart as `cold`).

Item 3 is what the sandbox costs (`snakegate.gate.sandbox`: preflight.py and
Snakemake's DAG run in a forked child of a worker process, not in the caller):
`validate_params` cold (the first call in a fresh process: worker start,
Snakemake import, DAG) and warm (the same params again: a preflight round trip
per call, the DAG from the cache), with the sandbox and in-process as before
(the same handlers called directly), interleaved in one run; the ratio is
sandbox / in-process. Beside them, a new DAG each call in the same warm worker (the DAG cache cleared):
what a chat pays for each new set of params.

Run alone: python bench/bench_gate.py [--quick] [--sandbox-only]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from common import (
    REPO, SNAKEGATE, SNAKEMAKE, Scratch, fmt_ratio, fmt_s, make_fanout_registry, median, r3, run_timed,
)

DRY_RUN_TARGET = 1.0
WARM_TARGET_S = 0.050


def curated_examples() -> list[tuple[str, Path]]:
    """(workflow id, first example) for every loadable workflow of the repository's registry."""
    from snakegate.registry.workflows import Registry
    registry = Registry.load(REPO)
    for folder, why in sorted(registry.broken.items()):
        print(f"  note: workflows/{folder} cannot be loaded and is not timed ({why.splitlines()[0]})", file=sys.stderr)
    out = []
    for wf_id in registry.ids():
        examples = registry.workflows[wf_id].examples()
        if examples:
            out.append((wf_id, examples[0]))
    return out


def resolved_params(registry_root: Path, example: Path) -> tuple[dict | None, str | None]:
    """The params Snakemake would be handed for `example` (absolute artifact paths), or why not."""
    from snakegate.gate.prove import gate
    from snakegate.registry.workflows import Registry
    from snakegate.config.read import read_run_config
    from snakegate.registry.settings import load_settings

    data, error = read_run_config(example)
    if error is not None:
        return None, error.message
    result = gate(Registry.load(registry_root), data, load_settings(registry_root), check_dag=False)
    if not result.ok:
        return None, "; ".join(f"{e.path}: {e.message}" for e in result.errors)
    return result.resolved_params, None


def compare(case: str, registry_root: Path, run_config: Path, snakefile: Path, params: dict,
            scratch: Scratch, reps: int, warmup: bool, timeout: float) -> dict:
    params_file = scratch.fresh("params") / "params.yaml"
    params_file.write_text(json.dumps(params))  # JSON is YAML
    gate_cmd = [SNAKEGATE, "--registry", str(registry_root), "validate", str(run_config)]

    def dry_cmd():
        return [SNAKEMAKE, "-n", "-s", str(snakefile), "--configfile", str(params_file), "-d", str(scratch.fresh("dry"))]

    if warmup:  # first runs pay for cold disk caches and .pyc files; neither side should carry that
        run_timed(gate_cmd, cwd=registry_root, timeout=timeout)
        run_timed(dry_cmd(), cwd=registry_root, timeout=timeout)
    gate_walls, dry_walls, problems = [], [], []
    for _ in range(reps):
        wall, code, tail = run_timed(gate_cmd, cwd=registry_root, timeout=timeout)
        (gate_walls if code == 0 else problems).append(wall if code == 0 else f"validate exit {code}: {tail}")
        wall, code, tail = run_timed(dry_cmd(), cwd=registry_root, timeout=timeout)
        (dry_walls if code == 0 else problems).append(wall if code == 0 else f"snakemake -n exit {code}: {tail}")
    g, d = median(gate_walls), median(dry_walls)
    ratio = g / d if g is not None and d else None
    row = {"case": case, "validate_s": r3(g), "dry_run_s": r3(d), "ratio": r3(ratio), "runs": reps,
           "validate_walls_s": [r3(w) for w in gate_walls], "dry_run_walls_s": [r3(w) for w in dry_walls],
           "target": f"ratio <= {DRY_RUN_TARGET}", "met": ratio is not None and ratio <= DRY_RUN_TARGET}
    if problems:
        row["problems"] = problems[:3]
    print(f"  {case:<28} validate {fmt_s(g):>9}   snakemake -n {fmt_s(d):>9}   ratio {fmt_ratio(ratio)}",
          flush=True)
    return row


def gate_vs_dry_run(scratch: Scratch, quick: bool, reps: int, timeout: float) -> dict:
    print("1. gate vs dry run (snakegate validate / snakemake -n)", flush=True)
    rows = []
    for wf_id, example in curated_examples():
        params, why = resolved_params(REPO, example)
        case = f"{wf_id} ({example.name})"
        if params is None:
            rows.append({"case": case, "problems": [f"example does not pass the gate: {why}"], "met": False})
            print(f"  {case:<28} skipped: example does not pass the gate", flush=True)
            continue
        rows.append(compare(case, REPO, example, REPO / "workflows" / wf_id / "Snakefile", params, scratch,
                            reps, warmup=not quick, timeout=timeout))
    fan = make_fanout_registry(scratch.fresh("fanout-gate"))
    for n in ([100, 1000] if quick else [100, 1000, 10000]):
        rows.append(compare(f"fanout {n:,} jobs", fan.root, fan.run_config(n), fan.snakefile, fan.params(n), scratch,
                            reps, warmup=not quick and n < 10000, timeout=timeout))
    return {"rows": rows, "target": f"validate / snakemake -n <= {DRY_RUN_TARGET} (median of {reps} runs)"}


def warm_gate(quick: bool, calls: int) -> dict:
    """validate_params exactly as the chat agent calls it: the platform action on one loaded registry,
    the same params again and again (the gate inside it, DAG step included, plus redaction and shaping)."""
    from snakegate.agent.actions.platform import ActionContext, call_action
    from snakegate.registry.workflows import Registry
    from snakegate.config.read import read_run_config
    from snakegate.registry.settings import load_settings

    print(f"2. warm in-process validate_params (the agent's action x {calls} on a loaded registry)", flush=True)
    ctx = ActionContext(Registry.load(REPO), load_settings(REPO))
    rows = []
    for wf_id, example in curated_examples():
        invocation, error = read_run_config(example)
        if error is not None:
            rows.append({"case": wf_id, "problems": [error.message], "met": False})
            continue
        arguments = {"workflow": wf_id, "params": invocation.get("params") or {}}
        start = time.perf_counter()
        first = call_action(ctx, "validate_params", arguments)
        cold = time.perf_counter() - start
        walls = []
        for _ in range(calls):
            start = time.perf_counter()
            outcome = call_action(ctx, "validate_params", arguments)
            walls.append(time.perf_counter() - start)
        warm = median(walls)
        row = {"case": f"{wf_id} ({example.name})", "cold_s": r3(cold), "warm_median_s": round(warm, 5),
               "warm_max_s": round(max(walls), 5), "calls": calls, "ok": first.ok and outcome.ok,
               "target": f"warm median <= {WARM_TARGET_S * 1000:.0f} ms", "met": warm <= WARM_TARGET_S}
        if not row["ok"]:
            row["problems"] = [json.dumps(o.result, sort_keys=True)[:300] for o in (first, outcome) if not o.ok]
        rows.append(row)
        print(f"  {row['case']:<36} cold {fmt_s(cold):>9}   warm median {warm * 1000:7.1f} ms   "
              f"max {max(walls) * 1000:7.1f} ms", flush=True)
    return {"rows": rows, "target": f"median <= {WARM_TARGET_S * 1000:.0f} ms per call"}


def in_process(kind: str, payload: dict, limits) -> dict:
    """The gate as it was before the sandbox: the same handlers, run in the calling process."""
    from snakegate.gate import sandbox_worker
    return sandbox_worker.HANDLERS[kind](payload)


def use_sandbox(on: bool, fresh_dags: bool = True) -> None:
    """Route the gate's preflight and DAG steps through the sandbox (on) or call them in-process (off); with
    `fresh_dags` the next call builds its DAG again."""
    from snakegate.gate import dag, sandbox
    global _real_call
    _real_call = _real_call or sandbox.call
    sandbox.call = _real_call if on else in_process
    if fresh_dags:
        dag._cache.clear()


_real_call = None


def cold_probe(mode: str, wf_id: str, example: str) -> None:
    """In a fresh process: the first validate_params, with (`sandbox`) or without (`inprocess`) the sandbox;
    prints its wall seconds as JSON."""
    from snakegate.agent.actions.platform import ActionContext, call_action
    from snakegate.config.read import read_run_config
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    use_sandbox(mode == "sandbox")
    ctx = ActionContext(Registry.load(REPO), load_settings(REPO))
    invocation, _ = read_run_config(Path(example))
    start = time.perf_counter()
    outcome = call_action(ctx, "validate_params", {"workflow": wf_id, "params": invocation.get("params") or {}})
    print(json.dumps({"s": time.perf_counter() - start, "ok": outcome.ok}))


def timed_calls(ctx, arguments: dict, calls: int, fresh_dags: bool, problems: list[str]) -> dict[str, list[float]]:
    """mode -> wall seconds of `calls` validate_params calls, sandbox and in-process interleaved; with
    `fresh_dags` each call builds its DAG again."""
    from snakegate.agent.actions.platform import call_action

    walls: dict[str, list[float]] = {"sandbox": [], "inprocess": []}
    for _ in range(calls):
        for mode in walls:  # interleaved: a change of load hits both
            use_sandbox(mode == "sandbox", fresh_dags=fresh_dags)
            start = time.perf_counter()
            outcome = call_action(ctx, "validate_params", arguments)
            walls[mode].append(time.perf_counter() - start)
            if not outcome.ok:
                problems.append(f"{mode}: {'new-DAG' if fresh_dags else 'warm'} call refused")
    return walls


def sandbox_cost(quick: bool, calls: int, reps: int) -> dict:
    """3. validate_params cold and warm with the sandbox vs in-process, per curated workflow, as ratios."""
    from snakegate.agent.actions.platform import ActionContext, call_action
    from snakegate.config.read import read_run_config
    from snakegate.gate import sandbox
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    print(f"3. sandbox cost: validate_params cold (fresh process, median of {reps}) and warm (x {calls}), "
          f"sandbox vs in-process; isolation: {sandbox.isolation()[1]}", flush=True)
    ctx = ActionContext(Registry.load(REPO), load_settings(REPO))
    rows = []
    for wf_id, example in curated_examples():
        invocation, error = read_run_config(example)
        if error is not None:
            rows.append({"case": wf_id, "problems": [error.message]})
            continue
        arguments = {"workflow": wf_id, "params": invocation.get("params") or {}}
        cold: dict[str, list[float]] = {"sandbox": [], "inprocess": []}
        problems = []
        for _ in range(reps):
            for mode in cold:  # interleaved: a change of load hits both
                proc = subprocess.run([sys.executable, __file__, "--cold-probe", mode, wf_id, str(example)],
                                      capture_output=True, text=True, timeout=900, cwd=REPO)
                try:
                    probe = json.loads(proc.stdout.strip().splitlines()[-1])
                    cold[mode].append(probe["s"]) if probe["ok"] else problems.append(f"{mode}: not ok")
                except (IndexError, ValueError):
                    problems.append(f"{mode}: {proc.stderr.strip()[-200:]}")
        for mode in ("sandbox", "inprocess"):
            use_sandbox(mode == "sandbox")
            call_action(ctx, "validate_params", arguments)  # builds the DAG once; the warm calls reuse it
        warm = timed_calls(ctx, arguments, calls, fresh_dags=False, problems=problems)
        # a new DAG each call, in a warm worker: what a chat pays for each new set of params
        fresh = timed_calls(ctx, arguments, calls, fresh_dags=True, problems=problems)
        use_sandbox(True)
        f_s, f_i = median(fresh["sandbox"]), median(fresh["inprocess"])
        c_s, c_i = median(cold["sandbox"]), median(cold["inprocess"])
        w_s, w_i = median(warm["sandbox"]), median(warm["inprocess"])
        row = {"case": f"{wf_id} ({example.name})", "cold_sandbox_s": r3(c_s), "cold_inprocess_s": r3(c_i),
               "cold_ratio": r3(c_s / c_i) if c_s and c_i else None,
               "warm_sandbox_ms": round(w_s * 1000, 2) if w_s else None,
               "warm_inprocess_ms": round(w_i * 1000, 2) if w_i else None,
               "warm_ratio": r3(w_s / w_i) if w_s and w_i else None,
               "fresh_dag_sandbox_ms": round(f_s * 1000, 1) if f_s else None,
               "fresh_dag_inprocess_ms": round(f_i * 1000, 1) if f_i else None,
               "fresh_dag_ratio": r3(f_s / f_i) if f_s and f_i else None, "calls": calls, "cold_runs": reps,
               "target": f"warm sandbox median <= {WARM_TARGET_S * 1000:.0f} ms",
               "met": w_s is not None and w_s <= WARM_TARGET_S}
        if problems:
            row["problems"] = problems[:3]
        rows.append(row)
        print(f"  {row['case']:<36} cold {fmt_s(c_s):>8} vs {fmt_s(c_i):>8} (x{fmt_ratio(row['cold_ratio'])})   "
              f"warm {row['warm_sandbox_ms']} ms vs {row['warm_inprocess_ms']} ms (x{fmt_ratio(row['warm_ratio'])})   "
              f"new DAG {row['fresh_dag_sandbox_ms']} ms vs {row['fresh_dag_inprocess_ms']} ms "
              f"(x{fmt_ratio(row['fresh_dag_ratio'])})", flush=True)
    return {"rows": rows, "isolation": sandbox.isolation()[1],
            "target": f"warm validate_params with the sandbox <= {WARM_TARGET_S * 1000:.0f} ms (median)"}


if __name__ == "__main__":
    if "--cold-probe" in sys.argv:
        i = sys.argv.index("--cold-probe")
        cold_probe(*sys.argv[i + 1:i + 4])
        sys.exit(0)
    quick = "--quick" in sys.argv
    out = {}
    if "--sandbox-only" not in sys.argv:
        scratch = Scratch()
        try:
            out = {"gate_vs_dry_run": gate_vs_dry_run(scratch, quick, reps=1 if quick else 3, timeout=600),
                   "warm_gate": warm_gate(quick, calls=10 if quick else 50)}
        finally:
            scratch.close()
    out["sandbox_cost"] = sandbox_cost(quick, calls=10 if quick else 50, reps=1 if quick else 3)
    print(json.dumps(out, indent=2))
