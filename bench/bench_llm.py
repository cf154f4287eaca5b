"""The chat on hidden researcher requests: right workflow, every stated value in the draft, mistakes refused.

Issue 26 §3. The requests are bench/llm_requests.yaml: three per curated
workflow (fully specified, vague, one with a mistake the gate must refuse),
written without any model in mind. Each goes once, into a fresh conversation,
through the real Conversation with one of these answering:

  --backend guided     the offline guided dialogue (no model)
  --backend scripted   a scripted model over real HTTP (tests/openai_server.py) that knows only the protocol:
                       it searches with the researcher's words, describes the first match, validates with no
                       params of its own (the controller fills what the researcher stated) and relays the
                       gate's answer; the floor of what the chat does without a model's help
  --backend openai     a real OpenAI-compatible server (--base-url), or llama-server started from --server and
                       --gguf and stopped by PID at the end; --tool-mode json | native | auto

in a throw-away copy of the registry. llm_score.py scores each one (right
workflow, stated values held, mistake refused and explained, nothing ran, an
unfaithful draft flagged or shown as ready: the "silently unfaithful" count);
this script counts the model requests and seconds to each draft and writes
bench/results-llm-<name>.json. Nothing here asserts: a missed target is reported.

    python bench/bench_llm.py --backend guided
    python bench/bench_llm.py --backend scripted
    python bench/bench_llm.py --base-url http://127.0.0.1:8088/v1 --model smollm2 --tool-mode json
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

import yaml

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REQUESTS = BENCH / "llm_requests.yaml"
MAX_STEPS = 8          # model requests per turn, as `snakegate chat` allows
FOLLOW_UPS = 3         # the guided dialogue's "done" answers per request
TARGET = {"correct_of_18": 12, "silently_unfaithful": 0}


def load_requests(path: Path = REQUESTS) -> list[dict]:
    return yaml.safe_load(path.read_text())


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



def know_nothing(body: dict):
    """The scripted model's step: search with the researcher's words, describe the first match, validate it with
    no params of its own, then relay what the gate said. It never reads the expected answer."""
    messages = body.get("messages") or []
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    request = str(messages[last_user].get("content") or "")
    done = [m for m in messages[last_user + 1:] if m.get("role") == "tool"]
    called = [tc["function"]["name"] for m in messages[last_user + 1:] for tc in m.get("tool_calls") or []]

    def step(name, arguments):
        return [{"id": None, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]

    if not done:
        return step("search_workflows", {"query": request})
    result = json.loads(done[-1].get("content") or "{}")
    if called[-1] == "search_workflows":
        matches = result.get("matches") or []
        return step("describe_workflow", {"workflow": matches[0]["id"]}) if matches else \
            "I found no workflow for that; which analysis do you want?"
    if called[-1] == "describe_workflow" and result.get("id"):
        return step("validate_params", {"workflow": result["id"], "params": {}})
    if result.get("ok"):
        return "The draft passed the gate; approve it in the panel to run it."
    errors = result.get("errors") or [result]
    return "The gate refused the draft: " + "; ".join(str(e.get("message", e)) for e in errors[:3])


def make_backend(args, scripted_url: str | None):
    if args.backend == "guided":
        from snakegate.agent.guided.dialogue import GuidedBackend
        return GuidedBackend()
    from snakegate.agent.backends.choose import OpenAIBackend
    if args.backend == "scripted":
        return OpenAIBackend(scripted_url, "scripted-model", timeout=60, max_tokens=args.max_tokens,
                             tool_mode="native")
    return OpenAIBackend(args.base_url, args.model, timeout=args.timeout, max_tokens=args.max_tokens,
                         tool_mode=args.tool_mode)


def one(request: dict, root: Path, backend, follow_up: str | None = None) -> dict:
    """One request in a fresh conversation: what the researcher was shown, the draft, and its score.
    `follow_up`: what the researcher answers (up to FOLLOW_UPS times) while a fully specified or mistaken
    request gets a question and no draft: the guided dialogue asks one param at a time and documents `done`
    as "keep the defaults for the rest"; a vague request's question is the answer wanted, so it gets none."""
    from llm_score import score

    from snakegate.agent.controller import Conversation
    from snakegate.agent.events import (
        ActionCalled,
        AssistantSaid,
        BackendFailed,
        DraftReady,
    )
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    settings = load_settings(root)
    runs_before = sorted(p.name for p in settings.runs_dir.iterdir()) if settings.runs_dir.is_dir() else []
    backend = Counting(backend)
    convo = Conversation(Registry.load(root), settings, backend, max_steps=MAX_STEPS)
    started = time.perf_counter()
    drafted_at = drafted_after = None

    def watch(event):
        nonlocal drafted_at, drafted_after
        if isinstance(event, DraftReady) and drafted_at is None:
            drafted_at, drafted_after = len(backend.replies), round(time.perf_counter() - started, 1)

    events = convo.send(request["text"], on_event=watch)
    for _ in range(FOLLOW_UPS if follow_up and request["kind"] != "vague" else 0):
        said = [e.text for e in events if isinstance(e, AssistantSaid)]
        if convo.draft is not None or not said or "?" not in said[-1] and "Answer" not in said[-1]:
            break
        events += convo.send(follow_up, on_event=watch)
    seconds = round(time.perf_counter() - started, 1)
    runs_after = sorted(p.name for p in settings.runs_dir.iterdir()) if settings.runs_dir.is_dir() else []
    draft = convo.draft
    seen = {"draft": {"workflow": draft.workflow, "params": draft.params, "differences": list(draft.differences)}
            if draft else None,
            "said": [e.text for e in events if isinstance(e, AssistantSaid)],
            # refused actions' lines (a search line only echoes the request back, it explains nothing)
            "shown": [e.summary for e in events if isinstance(e, ActionCalled) and not e.ok]
            + [e.message for e in events if isinstance(e, BackendFailed)],
            "described": [e.arguments.get("workflow") for e in events
                          if isinstance(e, ActionCalled) and e.name == "describe_workflow"],
            "ran": runs_after != runs_before}
    first = (backend.replies[0]["usage"] or {}) if backend.replies else {}
    return {"id": request["id"], "kind": request["kind"], "expected": request["workflow"], "text": request["text"],
            "mode": getattr(backend, "mode", None) or backend.name, "mode_why": getattr(backend, "mode_why", None),
            "requests_to_draft": drafted_at, "seconds_to_draft": drafted_after, "requests_total": len(backend.replies),
            "first_prompt_tokens": first.get("prompt_tokens"), "seconds": seconds,
            "score": score(request, seen), "seen": seen,
            "events": [type(e).__name__ + (f" {e.name} ok={e.ok}" if hasattr(e, "ok") else "") for e in events],
            "replies": backend.replies}


def report(rows: list[dict], name: str, verbose: bool) -> None:
    from llm_score import summary

    print(f"{name}: {'request':<20} {'kind':<8} {'outcome':<9} {'wf':<3} {'missing':<28} {'flag':<4} "
          f"{'silent':<6} {'to draft':>8} {'s':>6}  correct")
    for row in rows:
        s = row["score"]
        print(f"{'':{len(name) + 2}}{row['id']:<20} {row['kind']:<8} {s['outcome']:<9} "
              f"{'yes' if s['workflow_right'] else 'no':<3} {','.join(s['missing'])[:28]:<28} "
              f"{'yes' if s['flagged'] else '-':<4} {'YES' if s['silently_unfaithful'] else '-':<6} "
              f"{row['requests_to_draft'] or '-'!s:>8} {row['seconds']:>6}  {'yes' if s['correct'] else 'NO'}")
        if verbose:
            print(f"    seen: {json.dumps(row['seen'], default=str)[:600]}")
    print(json.dumps(summary(rows)))


def write(out: Path, args, rows: list[dict], planned: int, load_start: float) -> None:
    from llm_score import summary

    out.write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpu": platform.processor(), "cores": os.cpu_count(),
                    "threads": args.threads, "load_at_start": load_start, "load_now": os.getloadavg()[0]},
        "backend": args.backend, "server": "llama-server (started)" if args.server else args.base_url,
        "gguf": Path(args.gguf).name if args.gguf else None,
        "model": args.model if args.backend == "openai" else None,
        "tool_mode": args.tool_mode if args.backend == "openai" else None, "max_tokens": args.max_tokens,
        "target": TARGET, "requests_done": len(rows), "requests_planned": planned, "summary": summary(rows),
        "rows": rows}, indent=2, default=str) + "\n")


def rescore(path: Path, verbose: bool) -> int:
    from llm_score import score, summary

    data, requests = json.loads(path.read_text()), {r["id"]: r for r in load_requests()}
    for row in data["rows"]:
        row["score"] = score(requests[row["id"]], row["seen"])
    data["summary"] = summary(data["rows"])
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
    report(data["rows"], path.stem.removeprefix("results-llm-"), verbose)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="openai", choices=("guided", "scripted", "openai"))
    ap.add_argument("--base-url", help="a running OpenAI-compatible server, e.g. http://127.0.0.1:8088/v1")
    ap.add_argument("--model", default="smollm2", help="model name to send (llama-server serves its one model)")
    ap.add_argument("--server", help="llama-server binary to start (with --gguf)")
    ap.add_argument("--gguf", help="the GGUF model file for --server")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--tool-mode", default="json", choices=("auto", "native", "json"))
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--only", help="comma-separated request ids to run (default: all)")
    ap.add_argument("--name", help="results name: bench/results-llm-NAME.json (default: the backend and mode)")
    ap.add_argument("--no-write", action="store_true", help="print only; write no results file")
    ap.add_argument("--verbose", action="store_true", help="print what the researcher saw for each request")
    ap.add_argument("--rescore", metavar="RESULTS", help="score a results file again from what it recorded (after a "
                                                          "change to llm_score.py or the requests' values); no chat")
    args = ap.parse_args()
    sys.path[:0] = [str(REPO), str(BENCH), str(REPO / "tests")]
    if args.rescore:
        return rescore(Path(args.rescore), args.verbose)
    requests = load_requests()
    if args.only:
        requests = [r for r in requests if r["id"] in args.only.split(",")]
    proc = server = scripted_url = None
    if args.backend == "scripted":
        from openai_server import ScriptedOpenAI
        server = ScriptedOpenAI([know_nothing] * (MAX_STEPS * len(requests)))
        scripted_url = server.start()
    elif args.backend == "openai" and args.server:
        if not args.gguf:
            raise SystemExit("--server needs --gguf MODEL.gguf")
        proc, args.base_url = start_server(args.server, args.gguf, args.threads, args.ctx)
    elif args.backend == "openai" and not args.base_url:
        raise SystemExit("give --base-url of a running server, or --server and --gguf to start llama-server")
    name = args.name or (args.backend if args.backend != "openai" else f"{args.model}-{args.tool_mode}")
    out = BENCH / f"results-llm-{name}.json"
    load_start, rows = os.getloadavg()[0], []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
            root = registry_copy(Path(tmp) / "registry")
            for request in requests:
                # a fresh backend per request: auto mode's probe and any state start clean, as a new chat would
                rows.append(one(request, root, make_backend(args, scripted_url),
                                "done" if args.backend == "guided" else None))
                if not args.no_write:  # after each request: a slow model stopped half-way keeps what it did
                    write(out, args, rows, len(requests), load_start)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        if server is not None:
            server.stop()
    report(rows, name, args.verbose)
    if not args.no_write:
        print(f"wrote {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
