"""The chat with a small local model: model requests to a gated draft, and the size of the first request.

Issue 13's target: with llama.cpp's `llama-server` and SmolLM2-135M-Instruct
on 2 CPU cores, each scripted request reaches a gated draft in at most 4 model
requests, with a first request under 1,500 prompt tokens. This script runs
each request once through the real Conversation and OpenAIBackend (constrained
JSON by default) against a server you started, or one it starts from an
installed `llama-server` binary and a GGUF file (stopped by PID at the end),
in a throw-away copy of the registry. It counts the model requests until the
draft is written, reads the prompt tokens the server reports, and writes
bench/results-llm.json. Nothing here asserts: a missed target is reported.

    python bench/bench_llm.py --base-url http://127.0.0.1:8088/v1 --model smollm2
    python bench/bench_llm.py --server /path/to/llama-server --gguf SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results-llm.json"
REQUESTS = {"profile data/examples/tabular-penguins.csv, fill missing values with the median": "tabular-profile",
            "fit a power law to the photoluminescence series in data/examples": "pl-power-series"}
MAX_REQUESTS, MAX_FIRST_PROMPT = 4, 1500


class Counting:
    """The backend, counting requests and keeping each reply's token counts and actions."""

    def __init__(self, backend):
        self._backend = backend
        self.replies = []

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def request(self, messages, tools):
        started = time.perf_counter()
        reply = self._backend.request(messages, tools)
        self.replies.append({"seconds": round(time.perf_counter() - started, 1), "usage": reply.usage,
                             "finish_reason": reply.finish_reason, "text": reply.text,
                             "calls": [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls]})
        return reply


def registry_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("Snakefile", "workflows", "data"):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
        else:
            shutil.copy(src, dest / name)
    return dest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary: str, gguf: str, threads: int, ctx: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(tempfile.gettempdir() + f"/bench-llama-{port}.log", "w")
    proc = subprocess.Popen([binary, "-m", gguf, "--host", "127.0.0.1", "--port", str(port), "-c", str(ctx),
                             "-t", str(threads), "-np", "1", "--jinja", "--no-webui"], stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url + "/v1"
        except OSError:
            time.sleep(0.5)
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited with {proc.returncode}; see {log.name}")
    proc.terminate()
    raise SystemExit("llama-server did not become healthy within 5 minutes")


def one(request: str, root: Path, base_url: str, model: str, mode: str, max_tokens: int, timeout: float) -> dict:
    from snakegate.agent.backends.choose import OpenAIBackend
    from snakegate.agent.controller import Conversation
    from snakegate.agent.events import DraftReady
    from snakegate.registry.workflows import Registry
    from snakegate.registry.settings import load_settings

    backend = Counting(OpenAIBackend(base_url, model, timeout=timeout, max_tokens=max_tokens, tool_mode=mode))
    convo = Conversation(Registry.load(root), load_settings(root), backend, max_steps=MAX_REQUESTS + 2)
    started = time.perf_counter()
    drafted_at = None

    def watch(event):
        nonlocal drafted_at
        if isinstance(event, DraftReady) and drafted_at is None:
            drafted_at = len(backend.replies)

    events = convo.send(request, on_event=watch)
    first = backend.replies[0]["usage"] or {} if backend.replies else {}
    return {"request": request, "mode": backend.mode, "model_answered": convo.answered_by,
            "requests_to_draft": drafted_at, "requests_total": len(backend.replies),
            "first_prompt_tokens": first.get("prompt_tokens"), "seconds": round(time.perf_counter() - started, 1),
            "draft": {"workflow": convo.draft.workflow, "params": convo.draft.params} if convo.draft else None,
            "events": [type(e).__name__ + (f" {e.name} ok={e.ok}" if hasattr(e, "ok") else "") for e in events],
            "replies": backend.replies}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="a running OpenAI-compatible server, e.g. http://127.0.0.1:8088/v1")
    ap.add_argument("--model", default="smollm2", help="model name to send (llama-server serves its one model)")
    ap.add_argument("--server", help="llama-server binary to start (with --gguf)")
    ap.add_argument("--gguf", help="the GGUF model file for --server")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--tool-mode", default="json", choices=("auto", "native", "json"))
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/results-llm.json alone")
    ap.add_argument("--verbose", action="store_true", help="print every model reply")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    proc = None
    if args.server:
        if not args.gguf:
            raise SystemExit("--server needs --gguf MODEL.gguf")
        proc, base_url = start_server(args.server, args.gguf, args.threads, args.ctx)
    elif args.base_url:
        base_url = args.base_url
    else:
        raise SystemExit("give --base-url of a running server, or --server and --gguf to start llama-server")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
            root = registry_copy(Path(tmp) / "registry")
            rows = [one(r, root, base_url, args.model, args.tool_mode, args.max_tokens, args.timeout) | {"expected": wf}
                    for r, wf in REQUESTS.items()]
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"{'request':<72} {'mode':<6} {'to draft':>8} {'total':>5} {'1st prompt':>10} {'s':>6}  met")
    for row in rows:
        # met: a draft of the workflow the request is about, within the requests, from a small first request
        met = (row["requests_to_draft"] is not None and row["requests_to_draft"] <= MAX_REQUESTS
               and (row["first_prompt_tokens"] or 0) < MAX_FIRST_PROMPT
               and (row["draft"] or {}).get("workflow") == row["expected"])
        row["met"] = met
        print(f"{row['request'][:72]:<72} {row['mode']:<6} {str(row['requests_to_draft'] or '-'):>8} "
              f"{row['requests_total']:>5} {str(row['first_prompt_tokens']):>10} {row['seconds']:>6}  "
              f"{'yes' if met else 'NO'}")
        print(f"    draft: {json.dumps(row['draft']) if row['draft'] else 'none'}")
        if args.verbose:
            for n, reply in enumerate(row["replies"], 1):
                print(f"    {n}. {reply['seconds']} s, {(reply['usage'] or {}).get('prompt_tokens')} prompt tokens: "
                      + (json.dumps(reply["calls"]) if reply["calls"] else repr((reply["text"] or "")[:200])))
    if not args.no_write:
        RESULTS.write_text(json.dumps({"machine": {"python": platform.python_version(), "cpu": platform.processor(),
                                                   "threads": args.threads, "load_at_end": os.getloadavg()[0]},
                                       "server": base_url if not args.server else "llama-server (started)",
                                       "gguf": Path(args.gguf).name if args.gguf else None,
                                       "tool_mode": args.tool_mode, "max_tokens": args.max_tokens,
                                       "target": {"max_requests": MAX_REQUESTS, "max_first_prompt": MAX_FIRST_PROMPT},
                                       "rows": rows}, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
