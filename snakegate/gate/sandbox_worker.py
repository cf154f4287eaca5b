"""The sandbox worker: `python -m snakegate.gate.sandbox_worker`, started by `snakegate.gate.sandbox`.

It reads one JSON request per line on stdin and writes one JSON answer per line
on stdout (echoing the request's id). It never runs workflow code itself: for
each request it forks a child that sets its own limits (RLIMIT_AS, RLIMIT_CPU),
works in a fresh temporary folder, runs the request's handler and writes the
answer to a pipe of its own; the worker waits for it up to the wall-clock
limit, then kills the child's process group and every other process below the
worker (it is a child subreaper: orphans come back to it), and removes the folder.
The child never sees the worker's stdin or stdout.

Handlers (run in the child; their answers are plain JSON data):
- `preflight`: compile and call a workflow's `preflight(params, artifacts)` on
  deep-frozen copies; the findings as a list, or which stage failed.
- `dag`: Snakemake builds the DAG (`snakegate.gate.dag.build_here`).
- `lint`: Snakemake's linter (`snakegate.gate.dag.lint_here`).
The worker itself holds only the scrubbed environment it was started with.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import types
from collections.abc import Mapping
from typing import Any

MAX_TEXT = 2000  # characters of an exception message carried back


# ---- handlers (in the child) -----------------------------------------------------------------------------

def freeze(value: Any) -> Any:
    """A deep read-only copy: dicts become read-only mappings, lists and tuples become tuples."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Plain JSON-like data again: read-only mappings become dicts, tuples become lists."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__ says nothing
        text = "(its message cannot be shown)"
    return f"{type(exc).__name__}: {text}"[:MAX_TEXT]


def preflight(payload: dict) -> dict:
    """{"status": "ok", "found": [...]} or {"status": load | missing | crash | returned, "detail": ...}."""
    source = payload["source"].encode("utf-8", "surrogateescape")
    module = types.ModuleType("snakegate_preflight")
    module.__file__ = payload["file"]
    try:
        exec(compile(source, payload["file"], "exec"), module.__dict__)  # noqa: S102 - in the sandbox child
    except Exception as exc:  # noqa: BLE001 - any failure to load is reported, never a pass
        return {"status": "load", "detail": _exception_text(exc)}
    function = module.__dict__.get("preflight")
    if not callable(function):
        return {"status": "missing"}
    try:
        found = function(freeze(payload["params"]), freeze(payload["views"]))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed: a crashed preflight proved nothing
        return {"status": "crash", "detail": _exception_text(exc)}
    if not isinstance(found, (list, tuple)):
        return {"status": "returned", "detail": f"a {type(found).__name__}, not a list of findings"}
    found = thaw(found)
    try:
        json.dumps(found, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return {"status": "returned", "detail": f"a list holding a value that is not plain data ({exc})"}
    return {"status": "ok", "found": found}


def dag(payload: dict) -> dict:
    from dataclasses import asdict
    from pathlib import Path

    from snakegate.gate import dag as dagmod

    try:
        built = dagmod.build_here(Path(payload["snakefile"]), payload["config"])
    except dagmod.DagError as exc:
        return {"status": "error", "message": exc.message, "line": exc.line, "file": exc.file}
    return {"status": "ok", "dag": asdict(built)}


def lint(payload: dict) -> dict:
    from pathlib import Path

    from snakegate.gate import dag as dagmod

    return {"status": "ok", "report": dagmod.lint_here(Path(payload["snakefile"]), payload["config"])}


HANDLERS = {"preflight": preflight, "dag": dag, "lint": lint}


def _warm(kind: str) -> None:
    """Import what a handler needs in the worker, once, so each forked child starts with it loaded."""
    if kind in ("dag", "lint"):
        import snakemake.api  # noqa: F401
        import snakemake.linting.snakefiles  # noqa: F401
        import snakemake.settings.types  # noqa: F401

        # What Snakemake imports only on its first DAG or lint in a process: smart_open (and boto3, requests
        # below it) to read the Snakefile's URI, jsonschema for `validate`, the storage and rule lints. Each
        # forked child is such a first time, so without these every request imported them again: about 0.15 s
        # of CPU of a 0.17 s DAG. Imports only: nothing of a workflow runs here. A name a later Snakemake no
        # longer uses costs nothing: the child imports what it needs, as before.
        for name in ("jsonschema", "smart_open", "snakemake.linting.rules", "snakemake.storage"):
            try:
                importlib.import_module(name)
            except ImportError:
                pass

        import snakegate.gate.dag  # noqa: F401


# ---- one request: fork, limit, wait, clean up ------------------------------------------------------------

def _child(handler, payload: dict, limits: dict, workdir: str | None, write_fd: int, closing: list[int]) -> None:
    """In the forked child: never returns."""
    code = 0
    try:
        for fd in closing:
            os.close(fd)
        os.setsid()  # its own process group: the worker kills the whole group afterwards
        _die_with_parent()
        memory = int(limits["memory_mb"]) * 1024 * 1024
        cpu = int(float(limits["seconds"])) + 2
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if workdir is not None:
            os.environ["TMPDIR"] = workdir
            tempfile.tempdir = workdir
            os.chdir(workdir)
        try:
            answer = {"ok": True, "result": handler(payload)}
            data = json.dumps(answer, allow_nan=False)
        except MemoryError:
            data = json.dumps({"ok": False, "why": "memory", "message": "it ran out of memory"})
        except Exception as exc:  # noqa: BLE001 - a failed handler is an answer too, never silence
            data = json.dumps({"ok": False, "why": "crashed", "message": f"it failed ({_exception_text(exc)})"})
        view = memoryview((data + "\n").encode("utf-8"))
        while view:
            view = view[os.write(write_fd, view):]
    except BaseException:  # noqa: BLE001 - whatever happened, the child must not return into the worker's loop
        code = 70
    os._exit(code)


def _libc():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None


_LIBC = _libc()  # loaded once in the worker: each child only calls it


def _die_with_parent() -> None:
    """Ask the kernel to kill this child when the worker dies (Linux only; best effort)."""
    try:
        _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except AttributeError:
        pass


def _read_answer(fd: int, deadline: float, max_bytes: int) -> tuple[bytes | None, str | None]:
    """(the child's answer line, None) or (None, why not: timeout | too_large | silent)."""
    data = bytearray()
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, "timeout"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None, "timeout"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return None, "silent"
        data += chunk
        if len(data) > max_bytes:
            return None, "too_large"
    return bytes(data).partition(b"\n")[0], None


def _kill_leftovers(child: int) -> None:
    """Nothing the request started may outlive it: its process group, then every descendant of the worker
    (orphans are handed to the worker, a child subreaper, even when they left the group with setsid)."""
    try:
        os.killpg(child, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(5):  # a process may fork while we look; killed ones cannot
        found = _descendants()
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap(found)


def _descendants() -> list[int]:
    """Every live process below this one (read from /proc: in a PID namespace of its own, only the few in it)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    out, frontier = [], [os.getpid()]
    while frontier:
        kids = children.get(frontier.pop(), [])
        out.extend(kids)
        frontier.extend(kids)
    return out


def _reap(pids: list[int], seconds: float = 2.0) -> None:
    """Collect the exit status of killed children (zombies otherwise) until none is left or time is up."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not any(os.path.exists(f"/proc/{p}") for p in pids):
                return
            time.sleep(0.002)


def _wait_briefly(pid: int, seconds: float = 2.0) -> int | None:
    """The child's exit status if it ends within `seconds`, else None."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.0005)
    return None


def serve(request: dict, closing: list[int]) -> dict:
    """One request in a forked child; the answer (without the id)."""
    kind, payload, limits = request.get("kind"), request.get("payload"), request.get("limits") or {}
    handler = HANDLERS.get(kind)
    if handler is None or not isinstance(payload, dict):
        return {"ok": False, "why": "crashed", "message": f"the sandbox does not know the request `{kind}`"}
    seconds = float(limits.get("seconds", 10))
    _warm(kind)
    # Snakemake writes (its workdir, source cache): a fresh folder, removed afterwards; a preflight writes nothing
    workdir = tempfile.mkdtemp(prefix="snakegate-sandbox-") if kind != "preflight" else None
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:
            _child(handler, payload, limits, workdir, write_fd, [read_fd, *closing])
        os.close(write_fd)
        max_bytes = int(limits.get("answer_mb", 4)) * 1024 * 1024
        line, missing = _read_answer(read_fd, time.monotonic() + seconds, max_bytes)
        if line is not None:
            status = _wait_briefly(pid)  # it answered: it is exiting, and may not linger
        else:
            status = None
        if status is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_fd)
        if "pid" in locals():
            _kill_leftovers(pid)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    if line is not None:
        try:
            answer = json.loads(line)
            if isinstance(answer, dict):
                return answer
        except ValueError:
            pass
        return {"ok": False, "why": "crashed", "message": "it answered with something that is not plain data"}
    if missing == "timeout":
        return {"ok": False, "why": "timeout", "message": f"stopped after {seconds:g} s"}
    if missing == "too_large":
        return {"ok": False, "why": "crashed",
                "message": f"its answer was larger than the sandbox's limit of {max_bytes // (1024 * 1024)} MiB"}
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return {"ok": False, "why": "timeout", "message": "it used up its CPU time"}
        if sig == signal.SIGKILL:
            return {"ok": False, "why": "memory", "message": "it was killed, most likely for using too much memory"}
        return {"ok": False, "why": "crashed", "message": f"it was killed by {signal.Signals(sig).name}"}
    return {"ok": False, "why": "crashed",
            "message": f"it exited (code {os.WEXITSTATUS(status)}) without an answer"}


def main() -> None:
    try:  # orphans of a request become our children, so _kill_leftovers finds them outside a PID namespace too
        _LIBC.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except AttributeError:
        pass
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # stray prints of imported code never reach the protocol
        os.dup2(null, fd)
    closing = [proto_in.fileno(), proto_out.fileno()]
    while True:
        line = proto_in.readline()
        if not line:
            return
        try:
            request = json.loads(line)
            nonce = request["id"]
        except (ValueError, KeyError, TypeError):
            return  # not our caller: stop, the caller starts a fresh worker
        try:
            answer = serve(request, closing)
        except Exception as exc:  # noqa: BLE001 - the worker answers every request
            answer = {"ok": False, "why": "crashed", "message": f"the sandbox worker failed ({_exception_text(exc)})"}
        answer["id"] = nonce
        proto_out.write(json.dumps(answer, allow_nan=False).encode("utf-8") + b"\n")
        proto_out.flush()


if __name__ == "__main__":
    sys.exit(main())
