"""Scaling with the registry's size (issue 30): `list`, `search`, `validate` and the gate against `snakemake -n`
in registries of 10, 100 and 500 workflows.

Each registry is the real top-level Snakefile, tabular-profile and its demo tables, plus N-1 copies of
tabular-profile under other ids (a registry of hundreds of real-shaped workflows, committed to git as a
lab's would be). In each, one fresh process per call:

- `snakegate list` and `snakegate search tabular` (targets: <= 1 s at any size);
- `snakegate validate` of tabular-profile's first example against `snakemake -n` of the same params on
  tabular-profile's own Snakefile, the dry run a careful user pays anyway (target: ratio <= 1.0 at any size,
  and validate within 10 % of its 10-workflow time);
- the characters of the tool definitions: the `tools` array a new chat sends to an OpenAI-compatible model
  (`Conversation.tools` with an OpenAIBackend, which is never contacted: workflow ids as an enum, at most
  agent/prompt.py's MAX_LISTED of them), its system prompt, and the MCP server's tools/list (target:
  independent of the registry's size), measured in this process;
- the chat's cold start on that registry (bench_tui.py's `cold_starts`: a fresh process under Textual's
  pilot): the first paint and the greeting, i.e. the registry loaded and the conversation ready (target:
  chat usable, the greeting, in <= 1 s).

Pairs are interleaved (A B A B ...) so a drifting machine moves both alike; medians of --reps. Prints a table
and writes bench/results-scale.json; never asserts.

    python bench/bench_scale.py [--sizes 10,100,500] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from bench_tui import cold_starts  # noqa: E402
from common import PYTHON, REPO, load_average, machine, median, r3, run_timed  # noqa: E402

RESULTS = BENCH / "results-scale.json"
EXAMPLE = "workflows/tabular-profile/examples/basic.yaml"
CHAT_USABLE_S = 1.0


def make_registry(dest: Path, size: int) -> Path:
    """The top-level Snakefile, tabular-profile and size-1 copies of it, committed to git."""
    dest.mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    source = REPO / "workflows" / "tabular-profile"
    ignore = shutil.ignore_patterns(".snakemake", "__pycache__", "test")
    shutil.copytree(source, dest / "workflows" / "tabular-profile", ignore=ignore)
    text = (source / "workflow.yaml").read_text()
    for i in range(1, size):
        wf_id = f"profile-copy-{i:04d}"
        folder = dest / "workflows" / wf_id
        shutil.copytree(source, folder, ignore=ignore)
        (folder / "workflow.yaml").write_text(re.sub(r"^id: .*$", f"id: {wf_id}", text, count=1, flags=re.M))
    (dest / "data" / "examples").mkdir(parents=True)
    for table in (REPO / "data" / "examples").glob("tabular-*"):
        shutil.copy2(table, dest / "data" / "examples" / table.name)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=b@e", "commit", "-qm", "r"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)
    return dest


def dry_run_params(root: Path) -> Path:
    """tabular-profile's example params as its own Snakefile takes them (absolute paths)."""
    from snakegate.config.read import read_run_config
    from snakegate.gate.prove import gate
    from snakegate.registry.settings import settings_for
    from snakegate.registry.workflows import Registry

    data, _ = read_run_config(root / EXAMPLE)
    result = gate(Registry.load(root), data, settings_for(str(root)), check_dag=False)
    path = root / "dry-params.yaml"
    path.write_text(json.dumps(result.resolved_params))
    return path


def tool_sizes(root: Path) -> dict:
    """Characters (compact JSON) of what a model is told about the tools on this registry: the chat's `tools`
    array and system prompt at the start of a conversation, and the MCP server's tools/list."""
    from snakegate.agent.backends.openai_compat import OpenAIBackend
    from snakegate.agent.controller import Conversation
    from snakegate.agent.mcp.tools import mcp_tools
    from snakegate.registry.settings import settings_for
    from snakegate.registry.workflows import Registry

    conversation = Conversation(Registry.load(root), settings_for(str(root)),
                                OpenAIBackend("http://127.0.0.1:9/v1", "bench"), audit=False)
    tools = conversation.tools
    offered = next((t["function"]["parameters"]["properties"]["workflow"].get("enum", []) for t in tools
                    if t["function"]["name"] == "describe_workflow"), [])
    listing = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in mcp_tools()]
    return {"chat_tools_chars": len(json.dumps(tools, separators=(",", ":"))), "chat_tools": len(tools),
            "chat_workflow_ids_offered": len(offered),
            "system_prompt_chars": len(conversation.messages[0]["content"]),
            "mcp_tools_list_chars": len(json.dumps(listing, separators=(",", ":"))), "mcp_tools": len(listing)}


def chat_start(root: Path, reps: int) -> dict:
    """The chat's cold first paint and greeting on this registry, min and median of `reps` (at least 5)
    fresh processes."""
    try:
        runs = cold_starts(str(root), max(5, reps))  # as bench_tui.py: fewer cold starts make a noisy median
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"  chat cold start failed: {exc}", file=sys.stderr)
        return {"status": "failed", "why": str(exc)[:300]}
    out = {"status": "measured"}
    for key, name in (("total", "first_paint"), ("greeting", "greeting")):
        values = [r[key] for r in runs]
        out[f"{name}_median_s"], out[f"{name}_min_s"] = r3(median(values)), r3(min(values))
    out["met"] = out["greeting_median_s"] <= CHAT_USABLE_S
    return out


def timed(cmd: list[str], root: Path, reps: int, anchor: list[str] | None = None) -> dict:
    walls, anchors, codes = [], [], set()
    for _ in range(reps):
        wall, code, tail = run_timed(cmd, cwd=root)
        walls.append(wall)
        codes.add(code)
        if code != 0:
            print(f"  {' '.join(cmd[2:])} exited {code}: {tail}", file=sys.stderr)
        if anchor:
            wall, code, tail = run_timed(anchor, cwd=root)
            anchors.append(wall)
            if code != 0:
                print(f"  anchor exited {code}: {tail}", file=sys.stderr)
    out = {"median_s": r3(median(walls)), "min_s": r3(min(walls)), "exit_codes": sorted(codes)}
    if anchor:
        ratios = [a / b for a, b in zip(walls, anchors) if b]
        out.update(anchor_median_s=r3(median(anchors)), ratio=r3(median(ratios)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,500")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    report = {"machine": machine(), "load_at_start": round(load_average(), 2), "reps": args.reps, "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="sg-scale-") as tmp:
        for size in sizes:
            root = make_registry(Path(tmp) / f"r{size}", size)
            params = dry_run_params(root)
            snakegate = [PYTHON, "-m", "snakegate.cli"]
            dry = [PYTHON, "-m", "snakemake", "-n", "-q", "-s", str(root / "workflows/tabular-profile/Snakefile"),
                   "--configfile", str(params), "-d", str(root / "dry"), "--cores", "1"]
            row = {
                "list": timed(snakegate + ["list"], root, args.reps),
                "search": timed(snakegate + ["search", "tabular"], root, args.reps),
                "validate": timed(snakegate + ["validate", EXAMPLE], root, args.reps, anchor=dry),
            }
            row["tools"] = tool_sizes(root)
            row["chat"] = chat_start(root, args.reps)
            row["load_after"] = round(load_average(), 2)
            report["sizes"][str(size)] = row
            print(f"{size:>4} workflows: list {row['list']['median_s']:.2f} s · search {row['search']['median_s']:.2f} s"
                  f" · validate {row['validate']['median_s']:.2f} s vs snakemake -n "
                  f"{row['validate']['anchor_median_s']:.2f} s (ratio {row['validate']['ratio']:.2f}) · load "
                  f"{row['load_after']}", flush=True)
            tools, chat = row["tools"], row["chat"]
            print(f"      tools: chat {tools['chat_tools_chars']:,} chars ({tools['chat_tools']} tools, "
                  f"{tools['chat_workflow_ids_offered']} workflow ids offered), system prompt "
                  f"{tools['system_prompt_chars']:,} chars, MCP tools/list {tools['mcp_tools_list_chars']:,} chars"
                  + (f" · chat first paint {chat['first_paint_median_s']:.2f} s, greeting "
                     f"{chat['greeting_median_s']:.2f} s (usable <= {CHAT_USABLE_S:g} s: "
                     f"{'met' if chat['met'] else 'NOT met'})" if chat["status"] == "measured"
                     else f" · chat failed: {chat['why']}"), flush=True)
    base = report["sizes"].get(str(sizes[0]), {}).get("validate", {}).get("median_s")
    for size in sizes:
        v = report["sizes"][str(size)]["validate"]
        v["vs_smallest"] = r3(v["median_s"] / base) if base else None
    RESULTS.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
