"""Reproducible through the model, measured (issue 25.4): the same fully specified request N times through the chat.

"The model selects the tool, the tool produces the result, regeneration does not change it": this sends one
request N times (N=4 by default), each in a fresh Conversation through the real OpenAIBackend, approves
each draft and runs it, and counts how many distinct invocation ids and how many distinct output sets
(the sha256 of every declared output a run made) came out. The target for a fully specified request is 1
and 1. It also reports the time from sending the request to the gated draft.

By default the model is a scripted one served over real HTTP (tests/openai_server.py: it answers the request
with validate_params of the params the request names, then a sentence), so the numbers measure snakegate's
own path. `--url` points it at a real local model instead (e.g. llama.cpp's llama-server with a small GGUF):

    python bench/bench_repro.py                                   # scripted model, N=4
    python bench/bench_repro.py --url http://127.0.0.1:8088/v1 --model smollm2 --tool-mode json
    python bench/bench_repro.py --no-run                          # drafts only (no Snakemake runs)

Everything happens in a throw-away copy of the registry. Prints a table and writes bench/results-repro.json
(bench/results-repro-model.json with --url; neither with --no-write). Nothing here asserts: a missed target
is reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results-repro.json"              # the scripted model
RESULTS_MODEL = BENCH / "results-repro-model.json"  # a real model (--url)
REQUEST = "profile data/examples/tabular-penguins.csv, fill missing values with the median"
WORKFLOW = "tabular-profile"
PARAMS = {"dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "fill_median"}


def scripted_reply(body: dict):
    """What the scripted model answers: validate_params for the request, then (after the result) a sentence."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return "The draft passed the gate; approve it in the panel to run it."
    return [{"id": None, "type": "function",
             "function": {"name": "validate_params", "arguments": json.dumps({"workflow": WORKFLOW, "params": PARAMS})}}]


def start_scripted(n: int):
    """A scripted OpenAI-compatible server on a free local port, with enough replies for `n` conversations."""
    sys.path.insert(0, str(REPO / "tests"))
    from openai_server import DEFAULT_MODEL, ScriptedOpenAI

    server = ScriptedOpenAI([scripted_reply] * (4 * n))
    server.start()
    return server, server.base_url, DEFAULT_MODEL


def output_set(run_dir: Path, record: dict) -> str:
    """The sha256 of the run's declared outputs: each made output's name, path and content hash, sorted."""
    made = []
    for out in record.get("outputs") or []:
        path = run_dir / str(out.get("path"))
        if isinstance(out, dict) and out.get("exists") and path.is_file():
            with open(path, "rb") as fh:
                made.append([out.get("name"), out.get("path"), hashlib.file_digest(fh, "sha256").hexdigest()])
    return hashlib.sha256(json.dumps(sorted(made)).encode()).hexdigest()


def one(n: int, root: Path, url: str, model: str, request: str, tool_mode: str, timeout: float, run: bool) -> dict:
    """One conversation: the request -> its draft (timed) -> approved -> run (unless `run` is False)."""
    from snakegate.agent.backends.choose import OpenAIBackend
    from snakegate.agent.controller import Conversation
    from snakegate.agent.events import DraftReady
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry
    from snakegate.run.runner import RunOptions

    backend = OpenAIBackend(url, model, timeout=timeout, tool_mode=tool_mode)
    convo = Conversation(Registry.load(root), load_settings(root), backend, conversation_id=f"c-repro-{n}")
    started, drafted = time.perf_counter(), None

    def watch(event):
        nonlocal drafted
        if isinstance(event, DraftReady) and drafted is None:
            drafted = time.perf_counter() - started

    convo.send(request, on_event=watch)
    row = {"n": n, "invocation_id": convo.draft.invocation_id if convo.draft else None,
           "seconds_to_draft": round(drafted, 3) if drafted is not None else None, "run_id": None, "status": None,
           "output_set": None}
    if run and convo.draft is not None:
        outcome = convo.execute(convo.approve("bench_repro"), RunOptions(cores=1))
        row.update(run_id=outcome.run_id, status=outcome.status, output_set=output_set(outcome.run_dir, outcome.record))
    return row


def measure(n: int = 4, url: str | None = None, model: str = "smollm2", request: str = REQUEST,
            tool_mode: str = "auto", timeout: float = 600, run: bool = True) -> dict:
    """Send `request` `n` times; the rows and the counts (distinct invocation ids, distinct output sets)."""
    from bench_llm import registry_copy

    server = None
    if url is None:
        server, url, model = start_scripted(n)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-repro-") as tmp:
            root = registry_copy(Path(tmp) / "registry")
            rows = [one(i + 1, root, url, model, request, tool_mode, timeout, run) for i in range(n)]
    finally:
        if server is not None:
            server.stop()
    ids = {r["invocation_id"] for r in rows if r["invocation_id"]}
    sets = {r["output_set"] for r in rows if r["output_set"]}
    times = [r["seconds_to_draft"] for r in rows if r["seconds_to_draft"] is not None]
    return {"request": request, "n": n, "model": "scripted (tests/openai_server.py)" if server else model,
            "url": None if server else url, "drafts": sum(1 for r in rows if r["invocation_id"]),
            "distinct_invocation_ids": len(ids), "distinct_output_sets": len(sets) if run else None,
            "median_seconds_to_draft": round(statistics.median(times), 3) if times else None, "rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4, help="how many times the request is sent (default 4)")
    ap.add_argument("--url", help="a real OpenAI-compatible server, e.g. http://127.0.0.1:8088/v1 (llama-server); "
                                  "default: the scripted model over real HTTP")
    ap.add_argument("--model", default="smollm2", help="the model name sent with --url")
    ap.add_argument("--request", default=REQUEST, help="the fully specified request")
    ap.add_argument("--tool-mode", default="auto", choices=("auto", "native", "json"))
    ap.add_argument("--timeout", type=float, default=600, help="seconds per model request")
    ap.add_argument("--no-run", action="store_true", help="drafts only: count invocation ids, run nothing")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/results-repro.json alone")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    load = os.getloadavg()[0]
    result = measure(args.n, args.url, args.model, args.request, args.tool_mode, args.timeout, not args.no_run)
    result["machine"] = {"python": platform.python_version(), "cores": os.cpu_count(), "load_at_start": load,
                         "load_at_end": os.getloadavg()[0]}
    print(f"request: {result['request']}\nmodel: {result['model']}" + (f" at {result['url']}" if result["url"] else ""))
    print(f"{'#':>2}  {'invocation':<14}{'to draft':>9}  {'run':<27}{'status':<11}outputs")
    for r in result["rows"]:
        print(f"{r['n']:>2}  {(r['invocation_id'] or '-')[:12]:<14}{r['seconds_to_draft'] or '-'!s:>9}  "
              f"{r['run_id'] or '-':<27}{r['status'] or '-':<11}{(r['output_set'] or '-')[:12]}")
    sets = result["distinct_output_sets"]
    met = result["drafts"] == args.n and result["distinct_invocation_ids"] == 1 and sets in (1, None)
    print(f"distinct invocation ids: {result['distinct_invocation_ids']} (of {result['drafts']} drafts); distinct "
          f"output sets: {sets if sets is not None else 'not run'}; target 1 and 1: {'met' if met else 'NOT met'}; "
          f"median time to a draft {result['median_seconds_to_draft']} s (load {load:.1f})")
    if not args.no_write:
        (RESULTS_MODEL if args.url else RESULTS).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(BENCH))
    sys.exit(main())
