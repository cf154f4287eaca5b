"""Workflows and helpers for the fault tests (tests/run/test_faults.py) and the fault matrix (bench/fault_matrix.py).

Three tiny workflows: `slow-steps` (n steps that each sleep, then a gather:
a run that succeeds slowly enough to be interrupted), `fails-on-purpose` (a
copy, then a Python script that raises after an optional sleep), and
`run-block-fails` (a `run:` block that raises). Plus the plumbing both use:
a registry, starting `snakegate run` or plain `snakemake` as a user would,
waiting on a run's record, reading its PROV record and its processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from registry_copies import make_registry
from snakegate.provenance.runlock import lock_is_held

PYTHON = sys.executable
TABLE = "data/examples/tabular-penguins.csv"

SLOW_STEPS = {
    "workflow.yaml": """\
        id: slow-steps
        version: 0.1.0
        title: Slow steps
        description: n steps that each sleep a while, then a gather; a run slow enough to interrupt.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          step: {input: {table: csv-table}, output: {part: text}}
          gather: {input: {parts: text}, output: {done: text}}
        outputs:
          done: {path: results/done.txt, type: text, description: Every step's number.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "n": {"type": "integer", "minimum": 1, "default": 3, "description": "How many steps."},
            "sleep": {"type": "number", "minimum": 0, "default": 0, "description": "Seconds each step sleeps."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/done.txt",


        rule gather:
            input:
                parts=expand("results/parts/{i}.txt", i=range(config["n"])),
            output:
                done="results/done.txt",
            shell:
                "cat {input.parts} > {output.done}"


        rule step:
            input:
                table=config["table"],
            output:
                part="results/parts/{i}.txt",
            params:
                sleep=config["sleep"],
            shell:
                "echo step {wildcards.i} starts >&2; sleep {params.sleep}; echo {wildcards.i} > {output.part}"
        """,
}

FAILS_ON_PURPOSE = {
    "workflow.yaml": """\
        id: fails-on-purpose
        version: 0.1.0
        title: Fails on purpose
        description: Copies a table, then a Python script logs a line and raises; used to test failure records.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          copy: {input: {table: csv-table}, output: {copied: csv-table}}
          boom: {input: {copied: csv-table}, output: {never: text}}
        outputs:
          never: {path: results/never.txt, type: text, description: Never made.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "sleep": {"type": "number", "minimum": 0, "default": 0, "description": "Seconds boom waits first."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/never.txt",


        rule copy:
            input:
                table=config["table"],
            output:
                copied="results/copy.csv",
            shell:
                "cp {input.table} {output.copied}; echo copied the table >&2"


        rule boom:
            input:
                copied="results/copy.csv",
            output:
                never="results/never.txt",
            params:
                sleep=config["sleep"],
            log:
                "logs/boom.log",
            script:
                "scripts/boom.py"
        """,
    "scripts/boom.py": """\
        import time

        time.sleep(snakemake.params.sleep)
        with open(snakemake.log[0], "w") as log:
            log.write("boom: this rule always fails\\n")
        raise RuntimeError("target_properties ['Cr'] are also listed in feature_columns")
        """,
}

RUN_BLOCK_FAILS = {
    "workflow.yaml": """\
        id: run-block-fails
        version: 0.1.0
        title: Run block fails
        description: A run block raises.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          think: {input: {table: csv-table}, output: {thought: text}}
        outputs:
          thought: {path: results/thought.txt, type: text, description: Never made.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table"],
        "properties": {"table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."}},
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/thought.txt",


        rule think:
            input:
                table=config["table"],
            output:
                thought="results/thought.txt",
            run:
                raise ValueError(f"cannot think about {input.table}: the table has no 'idea' column")
        """,
}

WORKFLOWS = {"slow-steps": SLOW_STEPS, "fails-on-purpose": FAILS_ON_PURPOSE, "run-block-fails": RUN_BLOCK_FAILS}


def fault_registry(root: Path) -> Path:
    reg = make_registry(root, {k: {n: t for n, t in v.items() if "/" not in n} for k, v in WORKFLOWS.items()})
    import textwrap
    for wf_id, files in WORKFLOWS.items():
        for name, text in files.items():
            if "/" in name:
                (reg / "workflows" / wf_id / name).parent.mkdir(parents=True, exist_ok=True)
                (reg / "workflows" / wf_id / name).write_text(textwrap.dedent(text))
    return reg


def write_config(path: Path, workflow: str, **params) -> Path:
    from ruamel.yaml import YAML

    with open(path, "w") as fh:
        YAML().dump({"workflow": workflow, "params": {"table": TABLE, **params}}, fh)
    return path


def env_for(root: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    env["SNAKEGATE_REGISTRY"] = str(root)
    env.update(extra)
    return env


def _as_from_a_terminal() -> None:
    """In the child: the stop signals do what they do for a command typed at a terminal, even when the test
    session itself runs under nohup or in the background (which leave SIGHUP or SIGINT ignored, inherited)."""
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def start_snakegate_run(root: Path, config: Path, *extra, env: dict | None = None,
                        prefix: list[str] | None = None) -> subprocess.Popen:
    """`snakegate run` as a user starts it from a terminal: its own process group."""
    return subprocess.Popen([*(prefix or []), PYTHON, "-m", "snakegate.cli", "run", str(config), *extra], cwd=root,
                            env=env or env_for(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)


def start_plain_snakemake(root: Path, config: Path, *extra, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-m", "snakemake", "--configfile", str(config), "--cores", "1", *extra],
                            cwd=root, env=env or env_for(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_as_from_a_terminal)


def wait_for(predicate, timeout: float = 90.0, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    return None


def run_dirs(root: Path) -> list[Path]:
    """The run folders, as `snakegate runs` lists them (never the front end's dot-named scratch folder)."""
    runs = root / "runs"
    return sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")) if runs.is_dir() else []


def record_of(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def files_under(root: Path, pattern: str) -> list[Path]:
    return sorted((root / "runs").glob(pattern)) if (root / "runs").is_dir() else []


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def processes_in(folder: Path) -> list[str]:
    """Command lines of live processes that mention `folder` (a run left behind would)."""
    out = []
    needle = str(folder)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd and alive(int(pid)):
            out.append(f"{pid}: {cmd[:200]}")
    return out


def kill_group(pid: int, sig=signal.SIGKILL) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def killed_mid_job(root: Path, config, job_log: str, timeout: float = 180) -> Path:
    """`snakegate run CONFIG` in `root`, and once the job whose log is `job_log` (run-folder relative) has started,
    `snakegate run` and its Snakemake killed whole (SIGKILL to both process groups): a machine that goes down,
    nothing gets to write a word. Returns the run folder, whose record still says `running`."""
    from registry_copies import clean_env, new_run, run_names

    before = run_names(root)
    front = subprocess.Popen([PYTHON, "-m", "snakegate.cli", "run", str(config)], cwd=root, env=clean_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    snakemake_pid = None
    try:
        assert wait_for(lambda: len(run_names(root) - before) == 1, 60)
        run = new_run(root, before)
        assert wait_for(lambda: (run / job_log).exists(), timeout), f"the job of {job_log} never started"
        snakemake_pid = json.loads((run / "run.json").read_text()).get("snakemake_pid")
    finally:
        kill_group(front.pid)
        if snakemake_pid:
            kill_group(snakemake_pid)
        front.communicate(timeout=30)
    # SIGKILL reaches a group's processes one by one: the machine is down once none is left holding the folder
    assert wait_for(lambda: not alive(snakemake_pid) and not lock_is_held(run), 30)
    assert json.loads((run / "run.json").read_text())["status"] == "running"
    return run


def prov_jobs(run_dir: Path) -> dict[str, dict]:
    """The job activities of a run's prov.json (id -> attributes, typed literals read as their values):
    the activities that name a rule."""
    def plain(value):
        if isinstance(value, dict) and "$" in value:
            return value["$"]
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    doc = json.loads((run_dir / "prov.json").read_text())
    return {ident: {k: plain(v) for k, v in attrs.items()} for ident, attrs in (doc.get("activity") or {}).items()
            if "sg:rule" in attrs}


def finished_jobs(log_text: str) -> int:
    """Jobs Snakemake reported finished, the run's own target rule left out."""
    return sum(1 for line in log_text.splitlines()
               if line.startswith("Finished jobid: ") and "(Rule: snakegate_all)" not in line)


def fill(folder: Path) -> None:
    """Fill the file system of `folder` to the last byte (already full is full: then `filler` is empty)."""
    # Unbuffered writes: a buffered file keeps the bytes a full disk refused and
    # tries them again on close, which raised ENOSPC out of this helper once.
    for name, chunk in (("filler", 65536), ("filler-tail", 1)):  # then the last partial block
        try:
            fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError:  # no room left even for the file's entry: the run filled it already
            return
        try:
            while os.write(fd, b"\0" * chunk):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
