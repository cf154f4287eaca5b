"""The chat lists damaged runs as damaged: the model's list_runs and the history screen's records both say
`unreadable` with the reason, and the history's detail of such a run says so too — never a hang on a FIFO, a read
of /dev/zero, or a crash on a `started` that is no time (tests/damaged_runs.py's kinds, all at once).

A scripted model (real OpenAI-compatible HTTP server, real OpenAIBackend) calls list_runs; the history's records
are read by the same function the chat's history screen calls. Each is bounded: a hang fails the test.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from damaged_runs import DAMAGES, REASON, TIMEOUT, damaged_copy, real_run
from openai_server import call
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.tui import runinfo


def bounded(fn, *args):
    """fn(*args), or a TimeoutError after TIMEOUT seconds (the stuck thread is left behind, not waited for)."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(fn, *args).result(timeout=TIMEOUT)
    finally:
        pool.shutdown(wait=False)


def test_the_chat_lists_each_damaged_run_as_unreadable_with_the_reason(agent_registry, conversation):
    good = real_run(agent_registry)
    for kind in DAMAGES:
        damaged_copy(good, kind)
    convo, server = conversation([[call("list_runs", {"limit": 50})], "Here are your runs."])
    bounded(convo.send, "what did I run?")
    [tool] = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    runs = {r["run_id"]: r for r in json.loads(tool["content"])["runs"]}
    assert runs[good.name]["status"] == "succeeded"
    for kind in DAMAGES:
        assert runs[kind]["status"] == "unreadable" and REASON[kind] in runs[kind]["unreadable"], runs[kind]

    settings = load_settings(agent_registry)
    history = {r["run_id"]: r for r in bounded(runinfo.list_runs, settings.runs_dir)}
    for kind in DAMAGES:
        assert history[kind]["status"] == "unreadable" and REASON[kind] in history[kind]["unreadable"]
    facts = bounded(runinfo.run_facts, Registry.load(agent_registry), settings, settings.runs_dir / "run-json-fifo")
    assert facts.record["status"] == "unreadable" and REASON["run-json-fifo"] in facts.record["unreadable"]
