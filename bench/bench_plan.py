"""Plans: the plan gate against Snakemake's own dry run of the same plan, and a plan run against its steps run by hand.

1. `snakegate validate <plan>` (a fresh process: every step's gate, the references against the declared
   outputs, the composed DAG) against `snakemake -n` of the same composition written by hand: the plan's
   steps as Snakemake modules (snakegate/plan/composer.smk with the modules the plan gate builds), no gate.
   Target: ratio <= 1.0.
2. `snakegate run <plan>` (one approval, one DAG) against the same steps run one after another by hand with
   `snakegate run` (the first's output copied into the data roots for the second), which is what a researcher
   did before plans. Reported as a ratio; plans should cost no more.

Pairs are interleaved (A B A B ...) so a drifting machine moves both alike; median of --reps. Works in a
throw-away copy of the registry; prints a table and writes bench/results-plan.json. Never asserts.

    python bench/bench_plan.py [--reps 3] [--plan plans/clean-then-classify.yaml]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from common import PYTHON, REPO, load_average, machine, run_timed  # noqa: E402


def _registry(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("Snakefile", "workflows", "data", "plans"):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(".snakemake", "__pycache__", "test"))
        else:
            shutil.copy(src, dest / name)
    return dest


def _composed_dag_config(root: Path, plan_path: Path) -> Path:
    """The plan's modules and targets as the plan gate composes them, for plain `snakemake -n -s composer.smk`."""
    sys.path.insert(0, str(REPO))
    from snakegate.config.read import read_run_config
    from snakegate.contract.outputs import expand_outputs  # noqa: F401 - imported by compose
    from snakegate.gate.sheet_paths import with_absolute_paths
    from snakegate.plan import compose
    from snakegate.plan.prove import gate_plan
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    settings, registry = load_settings(root), Registry.load(root)
    data, _ = read_run_config(plan_path)
    result = gate_plan(registry, data, settings, check_dag=False)
    assert result.ok, result.errors
    workflows = {n: registry.get(r.workflow) for n, r in result.steps.items()}
    params = {n: with_absolute_paths(workflows[n].schema, r.resolved_params, root) for n, r in result.steps.items()}
    config = {"snakegate_steps": compose.modules(result.order, workflows, params, result.refs, ""),
              "snakegate_targets": compose.targets(result.order, workflows, params, "")}
    path = root / "composed.json"
    path.write_text(json.dumps(config))
    return path


def _pairs(a, b, reps: int) -> dict:
    ta, tb = [], []
    for _ in range(reps):
        for cmd, out in ((a, ta), (b, tb)):
            wall, code, tail = cmd()
            if code != 0:
                raise SystemExit(f"a timed command failed ({code}): {tail}")
            out.append(wall)
    ma, mb = statistics.median(ta), statistics.median(tb)
    return {"snakegate_s": round(ma, 3), "baseline_s": round(mb, 3), "ratio": round(ma / mb, 3),
            "snakegate_all_s": [round(x, 3) for x in ta], "baseline_all_s": [round(x, 3) for x in tb]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--plan", default="plans/clean-then-classify.yaml")
    args = parser.parse_args(argv)
    out = {"machine": machine(), "load_at_start": round(load_average(), 2), "plan": args.plan}
    with tempfile.TemporaryDirectory(prefix="snakegate-bench-plan-") as tmp:
        root = _registry(Path(tmp) / "registry")
        plan = root / args.plan
        composed = _composed_dag_config(root, plan)
        work = Path(tmp) / "dry"
        work.mkdir()
        out["gate_vs_dry_run"] = _pairs(
            lambda: run_timed([PYTHON, "-m", "snakegate.cli", "validate", str(plan)], cwd=root),
            lambda: run_timed([PYTHON, "-m", "snakemake", "-n", "-q", "-s", str(REPO / "snakegate/plan/composer.smk"),
                               "--configfile", str(composed), "-d", str(work), "--cores", "1"], cwd=root),
            args.reps)
        # by hand: each step alone with snakegate run, the first's output copied into the data roots
        import yaml

        data = yaml.safe_load(plan.read_text())
        steps = list(data["steps"].items())
        configs = []
        for i, (name, step) in enumerate(steps):
            params = dict(step.get("params") or {})
            for key, value in list(params.items()):
                if isinstance(value, dict) and set(value) == {"from", "output"}:
                    params[key] = f"data/examples/bench-handoff-{value['from']}.csv"
            path = root / f"by-hand-{i}-{name}.yaml"
            path.write_text(yaml.safe_dump({"workflow": step["workflow"], "params": params}))
            configs.append((name, path))

        def by_hand():
            total, code, tail = 0.0, 0, ""
            for i, (name, path) in enumerate(configs):
                wall, code, tail = run_timed([PYTHON, "-m", "snakegate.cli", "run", str(path), "--cores", "2"],
                                             cwd=root)
                total += wall
                if code != 0:
                    return total, code, tail
                if i + 1 < len(configs):  # the handoff a researcher makes between the two runs
                    newest = max((root / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
                    shutil.copy(next(newest.rglob("results/cleaned.csv")),
                                root / "data" / "examples" / f"bench-handoff-{name}.csv")
            return total, code, tail

        # the handoff file must exist for the by-hand configs to pass the gate before the first timing
        first = configs[0]
        wall, code, tail = run_timed([PYTHON, "-m", "snakegate.cli", "run", str(first[1]), "--cores", "2"], cwd=root)
        newest = max((root / "runs").iterdir(), key=lambda p: p.stat().st_mtime)
        shutil.copy(next(newest.rglob("results/cleaned.csv")), root / "data" / "examples" /
                    f"bench-handoff-{first[0]}.csv")
        out["run_vs_by_hand"] = _pairs(
            lambda: run_timed([PYTHON, "-m", "snakegate.cli", "run", str(plan), "--cores", "2"], cwd=root),
            by_hand, args.reps)
    out["load_at_end"] = round(load_average(), 2)
    (BENCH / "results-plan.json").write_text(json.dumps(out, indent=2) + "\n")
    g, r = out["gate_vs_dry_run"], out["run_vs_by_hand"]
    print(f"plan {args.plan}, median of {args.reps}, load {out['load_at_start']} -> {out['load_at_end']}")
    print("| measure | snakegate | baseline | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| plan gate vs snakemake -n of the composed plan | {g['snakegate_s']:.2f} s | {g['baseline_s']:.2f} s | "
          f"{g['ratio']:.2f} |")
    print(f"| plan run vs its steps run by hand | {r['snakegate_s']:.2f} s | {r['baseline_s']:.2f} s | "
          f"{r['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
