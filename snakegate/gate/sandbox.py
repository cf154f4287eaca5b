"""Where a contributed workflow's Python runs: a sandboxed worker process that never holds the user's secrets.

The gate and `snakegate check` must execute some of a workflow's own code: its
`preflight.py`, and the top level of its Snakefile while Snakemake builds the
DAG or lints it. None of that runs in the calling process (the chat, the MCP
server, the CLI), which may hold the model's API key. It runs in worker
processes started on first use and kept (one for preflights, one that has
imported Snakemake for DAGs and lint), so a warm `validate_params` pays a pipe
round trip and a fork, not a Python start:

- the worker is started with a scrubbed environment (`scrubbed_env`: an
  allowlist of what Python and Snakemake need, and even of those nothing named
  like a key, token, secret, password or credential), so it never holds them;
- where the OS allows it (root, or unprivileged user namespaces) it runs in new
  network, PID and mount namespaces (`unshare`): no network at all (not even
  loopback), and a /proc of its own, so it cannot read the environment of the
  process that started it; otherwise it runs without them and `isolation()` says so;
- the worker itself never runs workflow code: it forks one child per request,
  sets the child's limits (`Limits`: RLIMIT_AS for memory, RLIMIT_CPU, and a
  wall-clock deadline the worker enforces by SIGKILL), and after the child
  ends kills whatever the child left running, so no request can leave code
  behind to answer the next one. Each request carries a random id the answer
  must echo.

Fail closed: a request that times out, runs out of memory, crashes, or whose
worker dies or answers nonsense raises `SandboxError` with a sentence saying
which; the gate turns it into a refusal. A dead worker is replaced on the next
call. Answers are plain JSON data, never objects. This module starts processes
and gives each worker a temporary folder that goes with it; it reads nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import resource
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass

WORKER_MODULE = "snakegate.gate.sandbox_worker"


@dataclass(frozen=True)
class Limits:
    """What one request may use: wall-clock and CPU seconds, address space and the size of its answer in MiB."""

    seconds: float
    memory_mb: int
    answer_mb: int = 4


# A preflight is a few comparisons: seconds and a little memory are plenty, and its findings fit in a few MiB.
# Snakemake building or linting a DAG imports the workflow's libraries (pandas, numpy) and may expand 10,000
# jobs (a few MiB of plain data).
PREFLIGHT_LIMITS = Limits(seconds=10.0, memory_mb=2048, answer_mb=4)
SNAKEMAKE_LIMITS = Limits(seconds=300.0, memory_mb=6144, answer_mb=256)

# Environment the worker keeps: what Python, Snakemake and the libraries a Snakefile imports need to start.
KEEP_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "TERM", "SHELL",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHASHSEED",
    "PYTHONUTF8", "PYTHONIOENCODING", "SOURCE_DATE_EPOCH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS", "MPLBACKEND", "MPLCONFIGDIR",
})
KEEP_PREFIXES = ("LC_", "XDG_", "SNAKEMAKE_")
# Even a kept name is dropped when it looks like it holds a secret (SNAKEMAKE_..._TOKEN, XDG_..._KEY).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)


class SandboxError(Exception):
    """The sandboxed code did not give an answer; `why` is timeout | memory | crashed | unavailable."""

    def __init__(self, why: str, message: str):
        super().__init__(message)
        self.why = why
        self.message = message


def scrubbed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: the allowlisted names of `environ` (default os.environ) minus anything that
    looks like a secret, plus settings that keep a sandboxed import small (no bytecode written, one BLAS thread)."""
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items()
           if (k in KEEP_NAMES or k.startswith(KEEP_PREFIXES)) and not SECRET_NAME.search(k)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a workflow folder's content hash pins the run: write nothing into it
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")  # BLAS thread pools reserve address space the memory limit counts
    return env


# ---- isolation: which namespaces this machine grants ----------------------------------------------------

_NAMESPACES = ("--net", "--pid", "--fork", "--mount-proc", "--kill-child")
_isolation: tuple[list[str], str] | None = None


def _probe_isolation() -> tuple[list[str], str]:
    """(command prefix, description): new network + PID + mount namespaces as root, else inside an unprivileged
    user namespace, else none (said plainly: the network is then reachable and /proc shows other processes)."""
    candidates = [
        (["unshare", *_NAMESPACES], "network, PID and mount namespaces (unshare): no network, a /proc of its own"),
        (["unshare", "--user", "--map-root-user", *_NAMESPACES],
         "a user namespace with network, PID and mount namespaces (unshare -r): no network, a /proc of its own"),
    ]
    for prefix, description in candidates:
        try:
            probe = subprocess.run([*prefix, "--", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=10, env=scrubbed_env())
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return [*prefix, "--"], description
    return [], "no namespaces (unshare is missing or not permitted): the network is reachable and /proc is shared"


def isolation() -> tuple[list[str], str]:
    """The command prefix the sandbox runs under on this machine and a sentence saying what it isolates."""
    global _isolation
    if _isolation is None:
        _isolation = _probe_isolation()
    return _isolation


# ---- the workers -----------------------------------------------------------------------------------------

# Snakemake's Slurm executor plugin asks `scontrol show config` when it is imported (to word a help text). In a
# namespace without network that query cannot reach slurmctld and waits out its 10 s timeout, so every cold
# gate took 10 s more. Nothing in the sandbox talks to Slurm: there, the Slurm clients fail at once.
SLURM_CLIENTS = ("scontrol", "squeue", "sinfo", "sacct", "sbatch", "srun", "scancel")


def _offline_slurm(tmp: str) -> str:
    """A folder (inside the worker's own temporary folder) of stand-ins for the Slurm clients that fail at once."""
    folder = os.path.join(tmp, "offline-bin")
    os.mkdir(folder, 0o700)
    for name in SLURM_CLIENTS:
        path = os.path.join(folder, name)
        with open(path, "w", encoding="ascii") as f:
            f.write("#!/bin/sh\necho 'no Slurm inside the snakegate sandbox (it has no network)' >&2\nexit 1\n")
        os.chmod(path, 0o700)
    return folder


class _Worker:
    """One started worker process and the pipe ends to talk to it."""

    def __init__(self):
        prefix, _ = isolation()
        # the worker's temporary files (Snakemake's workdirs) live in a folder removed with the worker, even
        # when it was killed in the middle of a request
        self.tmp = tempfile.mkdtemp(prefix="snakegate-sandbox-")
        env = scrubbed_env() | {"TMPDIR": self.tmp}
        if "--net" in prefix:
            env["PATH"] = _offline_slurm(self.tmp) + os.pathsep + env.get("PATH", os.defpath)
        try:
            self.proc = subprocess.Popen(
                [*prefix, sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=env, cwd="/", start_new_session=True)
        except OSError:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.buffer = bytearray()
        self.owner = os.getpid()  # a forked copy of this process must not talk over the same pipes

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # unshare and the worker (and anything they started)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ask(self, request: bytes, deadline: float, max_bytes: int) -> bytes:
        """Send one request line and read one answer line of at most `max_bytes` before `deadline`;
        SandboxError otherwise."""
        try:
            self.proc.stdin.write(request)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxError("crashed", "the sandbox worker is gone (it could not be sent the request)") from None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise SandboxError("timeout", "the sandbox worker did not answer in time")
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise SandboxError("crashed", "the sandbox worker died without answering")
                self.buffer += chunk
                if len(self.buffer) > max_bytes:
                    raise SandboxError("crashed", "the sandbox answered with more data than any real answer holds")
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line


# Two workers: preflights in a small one (a fork of it costs about a millisecond), Snakemake's DAG and lint in
# one that has imported Snakemake (forking that costs several); each answers one request at a time, in order.
_workers: dict[str, _Worker] = {}
_locks = {"preflight": threading.Lock(), "snakemake": threading.Lock()}


def _pool(kind: str) -> str:
    return "preflight" if kind == "preflight" else "snakemake"


def _stop_worker(pool: str | None = None) -> None:
    """Kill a worker (or all of them); the next request starts a fresh one."""
    for name in [pool] if pool else list(_workers):
        worker = _workers.pop(name, None)
        if worker is not None and worker.owner == os.getpid():
            worker.kill()


atexit.register(_stop_worker)


def worker_pid(kind: str) -> int | None:
    """The process id of the worker that answers `kind` requests, while one runs (for tests and diagnostics)."""
    worker = _workers.get(_pool(kind))
    return worker.proc.pid if worker is not None and worker.alive() else None


def call(kind: str, payload: dict, limits: Limits) -> dict:
    """Run one `kind` request (preflight | dag | lint, see sandbox_worker) in the sandbox; its answer as plain
    data. Raises SandboxError when it gave none (time, memory, a crash, a worker that could not start)."""
    nonce = secrets.token_hex(16)
    try:
        # Non-finite floats may cross (a table's profile says a column holds inf; a delay axis may hold NaN):
        # Python's JSON writes and reads them back as the same floats. Params never hold one: the gate's
        # shape check refuses NaN and infinity before any request.
        request = json.dumps({"id": nonce, "kind": kind, "payload": payload, "limits": asdict(limits)},
                             allow_nan=True).encode("utf-8") + b"\n"
    except (TypeError, ValueError) as exc:
        raise SandboxError("crashed", f"the values cannot be handed to the sandbox as plain data ({exc})") from None
    pool = _pool(kind)
    with _locks[pool]:
        worker = _workers.get(pool)
        if worker is None or not worker.alive():
            _stop_worker(pool)
            try:
                worker = _workers[pool] = _Worker()
            except OSError as exc:
                raise SandboxError("unavailable", f"the sandbox worker could not be started ({exc})") from None
        # the worker enforces `limits.seconds` on the child; this margin covers its own start and the answer
        deadline = time.monotonic() + limits.seconds + 30.0
        try:
            line = worker.ask(request, deadline, limits.answer_mb * 1024 * 1024 + 4096)
            answer = json.loads(line)
            if not isinstance(answer, dict) or answer.get("id") != nonce:
                raise ValueError("an answer to another request")
        except SandboxError:
            _stop_worker(pool)  # fail closed, and start afresh next time
            raise
        except ValueError as exc:  # not JSON, or not ours
            _stop_worker(pool)
            raise SandboxError("crashed", f"the sandbox worker answered nonsense ({exc})") from None
    if answer.get("ok"):
        return answer.get("result")
    raise SandboxError(str(answer.get("why", "crashed")), str(answer.get("message", "the sandboxed code failed")))


def describe(error: SandboxError, limits: Limits) -> str:
    """The reason as a user reads it, naming the limit that was hit."""
    if error.why == "timeout":
        return f"it ran longer than the sandbox's limit of {limits.seconds:g} s ({error.message})"
    if error.why == "memory":
        return f"it needed more than the sandbox's limit of {limits.memory_mb} MiB of memory ({error.message})"
    return error.message


def run_command(argv: list[str], limits: Limits, *, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run one command under the same isolation, scrubbed environment and limits (for tools that parse a
    workflow, like snakefmt). Raises SandboxError when it runs out of time."""
    prefix, _ = isolation()
    memory = limits.memory_mb * 1024 * 1024
    cpu = int(limits.seconds) + 1

    def limit():  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    try:
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=limits.seconds,
                              env=scrubbed_env(), cwd=cwd, stdin=subprocess.DEVNULL, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        raise SandboxError("timeout", f"{argv[0]} did not finish") from None
