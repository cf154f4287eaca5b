"""Fault matrix (issue 12): every fault a run can meet, done for real, and what its record says afterwards.

Each scenario runs in a fresh throw-away registry with the real `snakegate run`
or plain `snakemake`, sends real signals by PID, kills real process groups,
fills a real (small tmpfs) disk and deletes a real run folder. Then it reads
the run folder only, as `snakegate runs` does (which also completes a stale
record), and prints one row per run:

    scenario | path | recorded status | detail | jobs recorded / jobs run | truthful

"jobs recorded" counts the jobs the PROV record calls succeeded; "jobs run"
counts the jobs Snakemake reported finished in its own log. A row is truthful
when the status is the one the fault must give, the record (run.json and
prov.json) is whole, the two job counts agree, and the detail names the cause
(the signal, the exception, the lost folder). The exit code is the number of
untruthful rows. The full-disk scenario is skipped, with the reason, where a
tmpfs cannot be mounted (it needs root).

    python bench/fault_matrix.py              # every scenario, a Markdown table
    python bench/fault_matrix.py --quick      # three of them (what the test runs)
    python bench/fault_matrix.py --json       # rows as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the fault workflows and process helpers the tests use

from run_faults import (  # noqa: E402
    PYTHON, alive, env_for, fault_registry, files_under, fill, finished_jobs, kill_group, processes_in, prov_jobs,
    record_of, run_dirs, start_plain_snakemake, start_snakegate_run, wait_for, write_config,
)


@dataclass
class Row:
    scenario: str
    path: str
    expected: str
    status: str
    detail: str
    recorded: int | None
    run: int | None
    truthful: bool
    why: str = ""


def _listing(root: Path, env: dict | None = None) -> dict[str, dict]:
    """`snakegate runs --json`, as a user reads the store (completing stale records on the way)."""
    proc = subprocess.run([PYTHON, "-m", "snakegate.cli", "runs", "--json"], cwd=root, env=env or env_for(root),
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or proc.stderr.lstrip().startswith("Traceback"):
        return {}
    return {r["run_id"]: r for r in json.loads(proc.stdout)["runs"]}


def _settle(run_dir: Path, timeout: float = 120) -> dict:
    """Wait until the run's processes are gone and its record is whole (or the time is up)."""
    wait_for(lambda: record_of(run_dir).get("stage") == "finished" or not processes_in(run_dir), timeout)
    wait_for(lambda: not alive(record_of(run_dir).get("snakemake_pid")) and not processes_in(run_dir), 30)
    return record_of(run_dir)


def _observe(scenario: str, path: str, expected: str, root: Path, run_dir: Path, env: dict | None = None,
             must_say: str | None = None) -> Row:
    listed = _listing(root, env).get(run_dir.name, {})
    record = record_of(run_dir)
    status = listed.get("status") or record.get("status") or "no record"
    problems = []
    if not record:
        problems.append("run.json unreadable")
    recorded = run = None
    try:
        recorded = sum(1 for a in prov_jobs(run_dir).values() if a.get("sg:status") == "succeeded")
    except (OSError, ValueError):
        problems.append("prov.json missing or unreadable")
    # Snakemake's own log file (named in run.json), else its copy, else what Snakemake printed
    logs = (record.get("snakemake_log"), run_dir / "snakemake.log", run_dir / "console.log")
    log = next((Path(p) for p in logs if p and Path(p).is_file()), None)
    if log is not None:
        run = finished_jobs(log.read_text(errors="replace"))
    failure = record.get("failure") or {}
    if record.get("cancelled_by"):
        detail = f"cancelled_by {record['cancelled_by']}; running: {', '.join(record.get('running_jobs') or []) or '-'}"
    elif failure:
        detail = f"{failure.get('rule')}: {failure.get('exception')}: {failure.get('message')}"
    elif status == "interrupted":
        detail = f"detected {record.get('interrupted_detected_at')}; running: {', '.join(record.get('running_jobs') or []) or '-'}"
    else:
        detail = record.get("error") or "-"
    if listed.get("note"):
        detail = f"{_short(listed['note'], 60)} — {detail}"
    if status != expected:
        problems.append(f"expected {expected}")
    if recorded is not None and run is not None and recorded != run:
        problems.append(f"PROV has {recorded} finished jobs, Snakemake finished {run}")
    if must_say and must_say not in json.dumps(record) + json.dumps(listed):
        problems.append(f"the record does not say `{must_say}`")
    if processes_in(run_dir):
        problems.append("a process of the run is still alive")
    return Row(scenario, path, expected, status, _short(detail), recorded, run, not problems, "; ".join(problems))


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _start(path: str, root: Path, cfg: Path, env: dict | None = None, prefix: list[str] | None = None):
    if path == "snakegate run":
        return start_snakegate_run(root, cfg, env=env, prefix=prefix)
    return start_plain_snakemake(root, cfg, env=env)


# ---- scenarios ----------------------------------------------------------------------------------------------
def front_end_dies(base: Path, how: str) -> list[Row]:
    root = fault_registry(base / "registry")
    cfg = write_config(base / "slow.yaml", "slow-steps", n=3, sleep=2)
    prefix = ["timeout", "-s", "KILL", "6"] if how == "timeout" else None
    front = _start("snakegate run", root, cfg, prefix=prefix)
    wait_for(lambda: files_under(root, "*/stderr/step/*.log"), 60)
    if how != "timeout":
        os.kill(front.pid, getattr(signal, how))
    front.communicate(timeout=60)
    run_dir = run_dirs(root)[0]
    _settle(run_dir)
    label = {"SIGKILL": "front end killed (kill -9)", "SIGHUP": "front end hung up (SIGHUP)",
             "timeout": "timeout -s KILL 6 snakegate run"}[how]
    return [_observe(label, "snakegate run", "succeeded", root, run_dir)]


def stop_signal(base: Path, path: str, sig: signal.Signals) -> list[Row]:
    root = fault_registry(base / "registry")
    cfg = write_config(base / "slow.yaml", "fails-on-purpose", sleep=60)
    front = _start(path, root, cfg)
    wait_for(lambda: files_under(root, "*/results/copy.csv"), 60)
    time.sleep(1.5)
    os.kill(front.pid, sig)
    front.communicate(timeout=90)
    run_dir = run_dirs(root)[0]
    _settle(run_dir)
    return [_observe(f"{sig.name} to the run", path, "cancelled", root, run_dir, must_say=sig.name)]


def kill_everything(base: Path, path: str) -> list[Row]:
    root = fault_registry(base / "registry")
    cfg = write_config(base / "slow.yaml", "slow-steps", n=4, sleep=2)
    front = _start(path, root, cfg)
    wait_for(lambda: len(files_under(root, "*/results/parts/*.txt")) >= 2, 90)
    run_dir = run_dirs(root)[0]
    snakemake_pid = record_of(run_dir).get("snakemake_pid")
    kill_group(front.pid)
    if snakemake_pid:
        kill_group(snakemake_pid)
    front.communicate(timeout=30)
    wait_for(lambda: not processes_in(run_dir), 30)
    return [_observe("kill -9 of every process of the run", path, "interrupted", root, run_dir,
                     must_say="interrupted_detected_at")]


def failing_job(base: Path, path: str) -> list[Row]:
    root = fault_registry(base / "registry")
    cfg = write_config(base / "fail.yaml", "fails-on-purpose")
    front = _start(path, root, cfg)
    front.communicate(timeout=120)
    run_dir = run_dirs(root)[0]
    _settle(run_dir)
    return [_observe("a job raises", path, "failed", root, run_dir,
                     must_say="RuntimeError: target_properties ['Cr'] are also listed in feature_columns")]


def full_disk(base: Path) -> list[Row]:
    mount = base / "small-disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if proc.returncode != 0:
        reason = proc.stderr.strip() or "mount failed"
        return [Row("disk full during the run (2 MiB tmpfs)", "snakegate run", "failed", "skipped",
                    _short(f"cannot mount a tmpfs here ({reason}); needs root"), None, None, True, "skipped")]
    try:
        root = fault_registry(base / "registry")
        runs = mount / "runs"
        runs.mkdir()
        env = env_for(root, SNAKEGATE_RUNS=str(runs))
        cfg = write_config(base / "slow.yaml", "slow-steps", n=2, sleep=3)
        front = _start("snakegate run", root, cfg, env=env)
        wait_for(lambda: list(runs.glob("*/results/parts/*.txt")), 60)
        fill(mount)
        front.communicate(timeout=120)
        run_dir = next(runs.iterdir())
        _settle(run_dir)
        (mount / "filler").unlink()
        return [_observe("disk full during the run (2 MiB tmpfs)", "snakegate run", "failed", root, run_dir, env=env,
                         must_say="disk is full")]
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def deleted_folder(base: Path) -> list[Row]:
    root = fault_registry(base / "registry")
    cfg = write_config(base / "slow.yaml", "slow-steps", n=3, sleep=2)
    front = _start("snakegate run", root, cfg)
    wait_for(lambda: files_under(root, "*/results/parts/*.txt"), 60)
    run_dir = run_dirs(root)[0]
    for _ in range(50):  # the run keeps writing into it (job records, logs): delete until it is gone
        subprocess.run(["chmod", "-R", "u+w", str(run_dir)], check=False)  # the workflow copy is read-only
        try:
            shutil.rmtree(run_dir)
            break
        except OSError:
            time.sleep(0.05)
    front.communicate(timeout=120)
    _settle(run_dir)
    return [_observe("run folder deleted during the run", "snakegate run", "failed", root, run_dir,
                     must_say="deleted or emptied while the run was going")]


def concurrent(base: Path, path: str) -> list[Row]:
    """Two runs of one config started at once: two folders (snakegate run), or one run and a refusal
    of the second (plain snakemake: the same run folder)."""
    root = fault_registry(base / "registry")
    cfg = write_config(base / "ok.yaml", "slow-steps", n=2, sleep=1)
    fronts = [_start(path, root, cfg) for _ in range(2)]
    outs = [f.communicate(timeout=180) for f in fronts]
    rows = []
    for run_dir in run_dirs(root):
        _settle(run_dir)
        rows.append(_observe("two runs of one config at once", path, "succeeded", root, run_dir))
    if path == "snakemake":
        refused = [(f.returncode, err) for f, (_, err) in zip(fronts, outs) if f.returncode != 0]
        # the same run folder: Snakemake's own directory lock, or the run folder's, refuses the second
        said = refused[0][1] if refused else ""
        ok = len(rows) == 1 and len(refused) == 1 and ("busy" in said or "cannot be locked" in said)
        rows.append(Row("two runs of one config at once", path, "refused", "refused" if ok else "not refused",
                        "the second Snakemake: " + ("run folder busy" if "busy" in said else "directory locked")
                        + ", no job started" if ok else _short(str(refused)),
                        None, None, ok, "" if ok else "the second run was not refused before any job"))
    elif len(rows) != 2:
        rows.append(Row("two runs of one config at once", path, "2 runs", f"{len(rows)} runs", "-", None, None, False,
                        "expected two run folders"))
    return rows


SCENARIOS = [
    ("front-end-sigkill", lambda b: front_end_dies(b, "SIGKILL")),
    ("front-end-sighup", lambda b: front_end_dies(b, "SIGHUP")),
    ("front-end-timeout", lambda b: front_end_dies(b, "timeout")),
    ("sigterm-snakegate", lambda b: stop_signal(b, "snakegate run", signal.SIGTERM)),
    ("sigint-snakegate", lambda b: stop_signal(b, "snakegate run", signal.SIGINT)),
    ("sigterm-snakemake", lambda b: stop_signal(b, "snakemake", signal.SIGTERM)),
    ("sigint-snakemake", lambda b: stop_signal(b, "snakemake", signal.SIGINT)),
    ("kill9-snakegate", lambda b: kill_everything(b, "snakegate run")),
    ("kill9-snakemake", lambda b: kill_everything(b, "snakemake")),
    ("failing-job-snakegate", lambda b: failing_job(b, "snakegate run")),
    ("failing-job-snakemake", lambda b: failing_job(b, "snakemake")),
    ("full-disk", full_disk),
    ("deleted-folder", deleted_folder),
    ("concurrent-snakegate", lambda b: concurrent(b, "snakegate run")),
    ("concurrent-snakemake", lambda b: concurrent(b, "snakemake")),
]
QUICK = ("front-end-sigkill", "deleted-folder", "concurrent-snakegate")


def table(rows: list[Row]) -> str:
    out = ["| scenario | path | recorded status | detail | jobs recorded / jobs run | truthful |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        counts = f"{r.recorded if r.recorded is not None else '–'} / {r.run if r.run is not None else '–'}"
        truth = "skipped" if r.why == "skipped" else ("yes" if r.truthful else f"**no**: {r.why}")
        out.append(f"| {r.scenario} | {r.path} | {r.status} | {r.detail.replace('|', '/')} | {counts} | {truth} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these scenarios: " + ", ".join(n for n, _ in SCENARIOS))
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    names = args.only or (QUICK if args.quick else [n for n, _ in SCENARIOS])
    rows: list[Row] = []
    scratch = Path(tempfile.mkdtemp(prefix="snakegate-faults-"))
    try:
        for name, scenario in SCENARIOS:
            if name not in names:
                continue
            started = time.monotonic()
            print(f"  {name} …", file=sys.stderr, flush=True)
            base = scratch / name
            base.mkdir()
            try:
                got = scenario(base)
            except Exception as exc:  # noqa: BLE001 - a scenario that breaks is an untruthful row, not a crash
                got = [Row(name, "-", "-", "error", _short(f"{type(exc).__name__}: {exc}"), None, None, False,
                           "the scenario itself failed")]
            rows.extend(got)
            print(f"  {name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    finally:
        subprocess.run(f"umount -l {scratch}/*/small-disk", shell=True, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else table(rows))
    return sum(1 for r in rows if not r.truthful)


if __name__ == "__main__":
    sys.exit(main())
