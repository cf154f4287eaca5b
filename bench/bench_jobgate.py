"""Job-side gate (issue 16.3): snakegate's own time inside each job, for a 1 KB and a 500 MB input.

Snakemake re-reads the top-level Snakefile in every job; there snakegate runs
the light gate of snakegate/run/jobgate.py. Each job writes what snakegate cost it
(`gate_seconds` wall, `gate_cpu_seconds` CPU: from the Snakefile's first line
through the imports, the job gate, the resources and the job's record) into
runs/<id>/jobs/*.json; this script reads those records. Cases:

- local: a two-rule workflow of `run:` blocks, so Snakemake spawns a process per
  job (each re-reads the Snakefile exactly as a cluster job does);
- slurm: the same through profiles/slurm on a one-node Slurm started by
  tests/slurm_cluster.py (only where it can start: root, Slurm installed; the
  batch step and the `srun` step that runs the rule each read the Snakefile).

Baseline: what every job paid before, once per Snakefile read: the full
gate's imports and `gate()` with input hashing (no DAG) on the same config, in
a fresh process that has imported Snakemake first. Target: <= 0.2 s per job,
whatever the input's size.

Run alone: python bench/bench_jobgate.py [--quick] [--no-slurm]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

from common import PYTHON, REPO, Scratch, fmt_s, r3

TARGET_S = 0.2
BIG_MB = 500

def make_registry(parent: Path, big_mb: int) -> Path:
    root = parent / "registry"
    (root / "workflows" / "spawned").mkdir(parents=True)
    shutil.copy2(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(REPO / "profiles", root / "profiles")
    sys.path.insert(0, str(REPO / "tests"))
    from spawned_workflow import SPAWNED  # the same workflow tests/run/test_jobgate.py runs

    for name, text in SPAWNED.items():
        (root / "workflows" / "spawned" / name).write_text(textwrap.dedent(text))
    data = root / "data"
    data.mkdir()
    (data / "small.csv").write_text("id,value\n1,0.5\n2,1.5\n")
    line = b"123456,0.123456789,abcdefghij\n"
    block = line * (1024 * 1024 // len(line))
    with open(data / "big.csv", "wb") as fh:
        fh.write(b"id,value,text\n")
        for _ in range(big_mb):
            fh.write(block)
    for name in ("small", "big"):
        (root / f"{name}.yaml").write_text(f"workflow: spawned\nparams:\n  table: data/{name}.csv\n")
    return root


def _records(root: Path) -> list[dict]:
    out = []
    for path in sorted((root / "runs").glob("*/jobs/*.json")):
        out.append(json.loads(path.read_text()))
    return out


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    env.update(extra)
    return env


def _run(root: Path, config: str, extra: list[str], env: dict, timeout: float = 900) -> list[dict]:
    shutil.rmtree(root / "runs", ignore_errors=True)
    proc = subprocess.run([PYTHON, "-m", "snakemake", "--configfile", config, *extra], cwd=root, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return _records(root)


def full_gate_s(root: Path, config: str) -> float:
    """What a job paid before the light gate: the full gate's imports and the gate with input hashes (no DAG),
    in a fresh process that has imported Snakemake first, as a job has."""
    code = ("import time,sys\nimport snakemake.api\nfrom pathlib import Path\nt=time.perf_counter()\n"
            "from snakegate.gate.prove import gate\nfrom snakegate.registry.workflows import Registry\n"
            "from snakegate.config.read import read_run_config\nfrom snakegate.registry.settings import load_settings\n"
            f"root=Path('.').resolve()\nconfig,_=read_run_config('{config}')\n"
            "r=gate(Registry.load(root),config,load_settings(root),check_dag=False)\n"
            "assert r.ok,r.errors\nprint(time.perf_counter()-t)\n")
    proc = subprocess.run([PYTHON, "-c", code], cwd=root, env=_env(), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-1500:])
    return float(proc.stdout.strip().splitlines()[-1])


def _row(case: str, recs: list[dict], baseline: float | None) -> dict:
    walls = [r["gate_seconds"] for r in recs if r.get("gate_seconds") is not None]
    cpus = [r["gate_cpu_seconds"] for r in recs if r.get("gate_cpu_seconds") is not None]
    worst = max(walls) if walls else None
    return {"case": case, "jobs": len(recs), "median_s": r3(statistics.median(walls)) if walls else None,
            "max_s": r3(worst), "median_cpu_s": r3(statistics.median(cpus)) if cpus else None,
            "full_gate_s": r3(baseline), "met": worst is not None and worst <= TARGET_S}


def job_gate(scratch: Scratch, quick: bool, slurm: bool = True) -> dict:
    print("5. job-side gate (snakegate's time inside each job)", flush=True)
    big_mb = 50 if quick else BIG_MB
    root = make_registry(scratch.fresh("jobgate"), big_mb)
    rows = []
    sizes = (("1 KB", "small.yaml"), (f"{big_mb} MB", "big.yaml"))
    for label, config in sizes:
        recs = _run(root, config, ["--cores", "1"], _env())
        rows.append(_row(f"{label} input, local spawned jobs", recs, full_gate_s(root, config)))
        print(f"  {rows[-1]['case']:<40} median {fmt_s(rows[-1]['median_s']):>7}  max {fmt_s(rows[-1]['max_s']):>7}"
              f"  (full gate {fmt_s(rows[-1]['full_gate_s'])})", flush=True)
    if slurm:
        import slurm_cluster

        reason = slurm_cluster.why_not()
        if reason:
            rows.append({"case": "slurm", "status": "not measured", "why": reason})
            print(f"  slurm: not measured ({reason})", flush=True)
        else:
            cluster = slurm_cluster.up()
            try:
                env = _env(**{"SLURM_CONF": str(cluster.conf)})
                for label, config in sizes:
                    recs = _run(root, config, ["--profile", "profiles/slurm"], env)
                    rows.append(_row(f"{label} input, Slurm jobs (batch + srun step)", recs,
                                     full_gate_s(root, config)))
                    print(f"  {rows[-1]['case']:<40} median {fmt_s(rows[-1]['median_s']):>7}  "
                          f"max {fmt_s(rows[-1]['max_s']):>7}", flush=True)
            finally:
                cluster.stop()
                shutil.rmtree(cluster.dir, ignore_errors=True)
    return {"status": "measured", "rows": rows, "target_s": TARGET_S, "big_input_mb": big_mb}


if __name__ == "__main__":
    scratch = Scratch()
    try:
        print(json.dumps(job_gate(scratch, "--quick" in sys.argv, slurm="--no-slurm" not in sys.argv), indent=2))
    finally:
        scratch.close()
