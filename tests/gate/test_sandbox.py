"""Contributed code (preflight.py, a Snakefile's top level) runs in the sandbox, never with the user's secrets.

Hostile preflights and Snakefiles live in throwaway registries and are driven
through the real gate, the real CLI and `snakegate check`: whatever they try
(read the environment, read another process's environment through /proc, open
a socket, hang, eat memory, leave a process behind), the API key stays unseen
and the gate answers with a refusal that says what happened, never a hang.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from registry_copies import TABLE_SNAKEFILE, clean_env, copy_table_workflow
from snakegate.gate import sandbox
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

KEY = "sk-test-0123456789abcdef-not-for-anyone"

# A preflight that reports back everything it can find that looks like the environment of any process.
SNOOP = """\
import os

def preflight(params, artifacts):
    seen = ["env:" + repr(dict(os.environ))]
    for name in os.listdir("/proc"):
        if name.isdigit() or name == "self":
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    seen.append(f"/proc/{name}/environ:" + fh.read().decode("utf-8", "replace"))
            except OSError as exc:
                seen.append(f"/proc/{name}/environ: {exc}")
    return [{"path": "table", "message": "SAW " + " | ".join(seen)}]
"""


def probe(tmp_path: Path, preflight: str | None = None, snakefile: str = TABLE_SNAKEFILE) -> Path:
    return copy_table_workflow(tmp_path / "reg", snakefile, preflight)


def gate_errors(root: Path, **kw) -> list:
    result = gate(Registry.load(root), {"workflow": "probe", "params": {"table": "data/t.csv"}}, load_settings(root),
                  **kw)
    return [] if result.ok else result.errors


@pytest.fixture(params=["this machine's isolation", "no namespaces"])
def isolation(request, monkeypatch):
    """Each test that takes it runs twice: with the namespaces this machine grants, and without any (as on a
    machine that grants none): the scrubbed environment, the limits and the clean-up hold either way."""
    if request.param == "no namespaces":
        monkeypatch.setattr(sandbox, "_isolation", ([], "no namespaces (forced by the test)"))
    sandbox._stop_worker()  # start workers under this isolation (and with the environment the test set)
    yield request.param
    sandbox._stop_worker()  # the next test starts its own


isolated = pytest.mark.skipif(not sandbox.isolation()[0],
                              reason="this machine grants no namespaces: " + sandbox.isolation()[1])


# ---- secrets ----------------------------------------------------------------------------------------------

@pytest.fixture
def keys_set(monkeypatch):
    for name in ("OPENAI_API_KEY", "SNAKEGATE_LLM_API_KEY", "GITHUB_TOKEN"):
        monkeypatch.setenv(name, KEY)


def test_hostile_preflight_cannot_read_an_api_key_set_in_the_parent(tmp_path, keys_set, isolation):
    errors = gate_errors(probe(tmp_path, SNOOP))
    assert len(errors) == 1 and errors[0].message.startswith("SAW env:"), errors
    assert "PATH" in errors[0].message  # it did read an environment: its own, scrubbed
    assert KEY not in errors[0].message  # (set at run time, so /proc/<pid>/environ never held it either)


@isolated
def test_hostile_preflight_cannot_read_the_key_from_the_cli_process_environment(tmp_path):
    """The key is in the CLI process's environment from its first instruction (/proc/<pid>/environ shows it
    to any process of the same user that can see that pid): the sandbox's /proc shows no such process."""
    root = probe(tmp_path, SNOOP)
    (root / "run.yaml").write_text(json.dumps({"workflow": "probe", "params": {"table": "data/t.csv"}}))
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "validate", "run.yaml", "--json"], cwd=root,
                          env=clean_env(OPENAI_API_KEY=KEY, SNAKEGATE_LLM_API_KEY=KEY), capture_output=True,
                          text=True, timeout=300)
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["errors"][0]["message"].startswith("SAW env:")
    assert "/proc/1/environ:" in out["errors"][0]["message"]  # it looked at the processes it could see
    assert KEY not in proc.stdout + proc.stderr


def test_snakefile_top_level_runs_without_the_key_in_the_dag_step_and_in_check(tmp_path):
    spy = tmp_path / "spy.txt"
    hostile = (f"import os\nwith open({str(spy)!r}, 'a') as _fh:\n    _fh.write(repr(dict(os.environ)) + '\\n')\n\n"
               + TABLE_SNAKEFILE)
    root = probe(tmp_path, snakefile=hostile)
    (root / "run.yaml").write_text(json.dumps({"workflow": "probe", "params": {"table": "data/t.csv"}}))
    (root / "workflows" / "probe" / "examples").mkdir()
    (root / "workflows" / "probe" / "examples" / "basic.yaml").write_text(
        json.dumps({"workflow": "probe", "params": {"table": "data/t.csv"}}))
    env = clean_env(OPENAI_API_KEY=KEY, SNAKEGATE_LLM_API_KEY=KEY, AWS_SECRET_ACCESS_KEY=KEY)
    for command, says in ((["validate", "run.yaml"], "passes the gate"), (["check", "probe"], "[lint]")):
        proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *command], cwd=root, env=env,
                              capture_output=True, text=True, timeout=600)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert says in proc.stdout, proc.stdout + proc.stderr  # the check's DAG built and the linter ran
    loads = spy.read_text().splitlines()
    assert len(loads) >= 3  # the gate's DAG, check's DAG and check's lint each loaded the Snakefile
    assert all("'PATH'" in line for line in loads) and KEY not in spy.read_text()


def test_worker_environment_keeps_what_python_needs_and_drops_anything_named_like_a_secret():
    env = sandbox.scrubbed_env({
        "PATH": "/usr/bin", "HOME": "/home/ada", "LANG": "C.UTF-8", "TMPDIR": "/scratch", "LC_ALL": "C",
        "OPENAI_API_KEY": KEY, "SNAKEGATE_LLM_API_KEY": KEY, "GITHUB_TOKEN": KEY, "PGPASSWORD": KEY,
        "AWS_SECRET_ACCESS_KEY": KEY, "GOOGLE_APPLICATION_CREDENTIALS": "/home/ada/gcp.json",
        "SSH_AUTH_SOCK": "/tmp/agent", "DATABASE_URL": "postgres://ada:pw@db/x", "SNAKEMAKE_STORAGE_TOKEN": KEY,
        "XDG_CACHE_HOME": "/home/ada/.cache",
    })
    assert {k: env[k] for k in ("PATH", "HOME", "LANG", "TMPDIR", "LC_ALL", "XDG_CACHE_HOME")} == {
        "PATH": "/usr/bin", "HOME": "/home/ada", "LANG": "C.UTF-8", "TMPDIR": "/scratch", "LC_ALL": "C",
        "XDG_CACHE_HOME": "/home/ada/.cache"}
    assert KEY not in json.dumps(env) and "DATABASE_URL" not in env and "SSH_AUTH_SOCK" not in env
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in env


# ---- no network -------------------------------------------------------------------------------------------

@isolated
def test_preflight_cannot_reach_a_server_listening_on_this_machine(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        errors = gate_errors(probe(tmp_path, f"""\
import socket

def preflight(params, artifacts):
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        said = "connected"
    except OSError as exc:
        said = f"refused: {{exc}}"
    return [{{"path": "table", "message": said}}]
"""))
    finally:
        server.close()
    assert len(errors) == 1 and errors[0].message.startswith("refused"), errors


# ---- limits: never a hang, never a crash ------------------------------------------------------------------

def test_preflight_that_never_returns_is_refused_naming_the_time_limit(tmp_path, monkeypatch, isolation):
    monkeypatch.setattr(sandbox, "PREFLIGHT_LIMITS", sandbox.Limits(seconds=2, memory_mb=2048))
    errors = gate_errors(probe(tmp_path, "def preflight(params, artifacts):\n    while True:\n        pass\n"))
    assert [e.code for e in errors] == ["preflight"]
    assert "ran longer than the sandbox's limit of 2 s" in errors[0].message
    assert "workflows/probe/preflight.py" in errors[0].message and "not in your params" in errors[0].hint


def test_preflight_memory_bomb_is_refused_naming_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "PREFLIGHT_LIMITS", sandbox.Limits(seconds=30, memory_mb=1024))
    errors = gate_errors(probe(tmp_path, "def preflight(params, artifacts):\n    hog = []\n    while True:\n"
                                         "        hog.append(bytearray(50_000_000))\n"))
    assert [e.code for e in errors] == ["preflight"]
    assert "needed more than the sandbox's limit of 1024 MiB of memory" in errors[0].message
    assert gate_errors(probe(tmp_path / "again", "def preflight(params, artifacts):\n    return []\n")) == []


def test_snakefile_memory_bomb_is_a_dag_refusal_naming_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "SNAKEMAKE_LIMITS", sandbox.Limits(seconds=60, memory_mb=1536))
    errors = gate_errors(probe(tmp_path, snakefile="_hog = bytearray(8 * 1024 ** 3)\n" + TABLE_SNAKEFILE))
    assert [e.code for e in errors] == ["dag"]
    assert errors[0].message.startswith("Snakemake cannot build the jobs for these params: the workflow's code was "
                                        "stopped in the sandbox: it needed more than the sandbox's limit of 1536 MiB")


def test_killed_worker_is_a_refusal_and_the_next_call_starts_a_fresh_worker(tmp_path):
    root = probe(tmp_path, "import time\n\ndef preflight(params, artifacts):\n    time.sleep(60)\n    return []\n")
    got: list = []
    asking = threading.Thread(target=lambda: got.append(gate_errors(root)))
    asking.start()
    deadline = time.monotonic() + 60
    while sandbox.worker_pid("preflight") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = sandbox.worker_pid("preflight")
    time.sleep(0.5)  # the request is in the worker
    os.killpg(killed, signal.SIGKILL)
    asking.join(timeout=120)
    assert not asking.is_alive()
    [errors] = got
    assert [e.code for e in errors] == ["preflight"] and "sandbox worker died" in errors[0].message
    (root / "workflows" / "probe" / "preflight.py").write_text("def preflight(params, artifacts):\n    return []\n")
    assert gate_errors(root) == []
    assert sandbox.worker_pid("preflight") not in (None, killed)


def test_process_a_preflight_leaves_behind_is_killed_before_the_gate_answers(tmp_path, isolation):
    marker = tmp_path / "still-alive"
    errors = gate_errors(probe(tmp_path, f"""\
import os, time

def preflight(params, artifacts):
    if os.fork() == 0:
        os.setsid()
        while True:
            open({str(marker)!r}, "w").close()
            time.sleep(0.05)
    time.sleep(0.3)
    return []
"""))
    assert errors == [] and marker.exists()  # the left-behind process did run
    marker.unlink()
    time.sleep(1.0)
    assert not marker.exists()


def test_answers_are_plain_data_so_a_preflight_cannot_hand_the_gate_an_object(tmp_path):
    errors = gate_errors(probe(tmp_path, """\
class Sneaky(str):
    def __eq__(self, other):
        return True

def preflight(params, artifacts):
    return [{"path": "table", "message": Sneaky("looks like a string")}, {1, 2}]
"""))
    assert [e.code for e in errors] == ["preflight"]
    assert "returned a list holding a value that is not plain data" in errors[0].message


def test_preflight_answer_too_large_to_be_real_is_refused_not_read(tmp_path):
    errors = gate_errors(probe(tmp_path, "def preflight(params, artifacts):\n"
                                         "    return [{'path': 'table', 'message': 'x' * 1000}] * 20000\n"))
    assert [e.code for e in errors] == ["preflight"]
    assert "larger than the sandbox's limit of 4 MiB" in errors[0].message


@isolated
def test_slurm_clients_fail_at_once_in_the_networkless_sandbox(tmp_path):
    """Snakemake's Slurm plugin runs `scontrol show config` as it is imported; without network that waited out
    a 10 s timeout on every cold gate. In the sandbox the Slurm clients say why they cannot work and stop."""
    errors = gate_errors(probe(tmp_path, """\
import subprocess

def preflight(params, artifacts):
    done = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=5)
    return [{"path": "table", "message": f"exit {done.returncode}: {done.stderr.strip()}"}]
"""))
    assert [e.message for e in errors] == ["exit 1: no Slurm inside the snakegate sandbox (it has no network)"]
