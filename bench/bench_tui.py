"""TUI first paint: how long `snakegate chat` takes to show its first screen, cold and warm (issue 13.4).

Three measures, each the median of `reps` runs, on the repository's registry with the offline guided
dialogue (no model server is involved; the greeting needs no model call):

- cold: a fresh Python process per run that does what `snakegate chat` does (settings, build_app with the
  registry loaded on first use, ChatApp) and runs the app headless under Textual's test pilot
  (`app.run_test()`) until Textual's `Ready` event (posted once the first frame is composited). Timed from
  just before the parent spawns the process to the child's timestamp at Ready; both read CLOCK_MONOTONIC,
  which is system-wide on Linux. Target (issue 13.4): 0.5 s. The app paints first and then loads the
  registry and the conversation in the background; `greeting` is the time until that is done and the
  greeting is on screen (reported, no target).
- cold_terminal: the console command itself, `snakegate chat --guided`, in a pseudo-terminal: from the
  spawn to the first bytes of the header's "snakegate chat" title on the terminal (a real driver, real
  escape codes), then ctrl+q. A cross-check of `cold`, not a target.
- warm: in this process, modules imported and the registry loaded: build_app() + run_test() until Ready.

Run alone: python bench/bench_tui.py [--quick] [--reps N]
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from common import PYTHON, REPO, fmt_s, median, r3

COLD_TARGET_S = 0.5
SIZE = (120, 40)


# ---- the measured child ---------------------------------------------------------------------------------------

def _child(registry: str) -> None:
    """One cold start, run in a fresh process: print when the imports were done and when the first frame was."""
    import asyncio

    from snakegate.commands.chat_cmds import build_app
    from snakegate.registry.settings import load_settings
    from textual import events

    imported = time.monotonic()
    marks: dict[str, float] = {}

    def load_registry():  # as `snakegate chat` does: the registry is loaded on first use, after the paint
        from snakegate.registry.workflows import Registry

        return Registry.load(settings.registry_root)

    async def first_paint() -> None:
        app = build_app(load_registry, settings, guided=True, approved_by="bench")
        marks["built"] = time.monotonic()

        def hook(message) -> None:
            if isinstance(message, events.Ready) and "ready" not in marks:
                marks["ready"] = time.monotonic()

        async with app.run_test(size=SIZE, message_hook=hook) as pilot:
            while "ready" not in marks:
                await pilot.pause(0.005)
            while app.conversation is None:
                await pilot.pause(0.005)
            await pilot.pause()
            marks["greeting"] = time.monotonic()

    settings = load_settings(Path(registry))

    asyncio.run(first_paint())
    print(json.dumps({"imported": imported, **marks}))


# ---- the three measures -----------------------------------------------------------------------------------------

def _cold_once(registry: str, timeout: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    start = time.monotonic()
    proc = subprocess.run([PYTHON, __file__, "--child", registry], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"cold start failed (exit {proc.returncode}): {last[:300]}")
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"total": marks["ready"] - start, "imports": marks["imported"] - start,
            "build": marks["built"] - marks["imported"], "paint": marks["ready"] - marks["built"],
            "greeting": marks["greeting"] - start}


def cold_starts(registry: str, reps: int, timeout: float = 120) -> list[dict]:
    """`reps` cold starts of the chat on `registry` (a folder), after one unrecorded start that warms the disk
    cache and the .pyc files: each {"total" (first paint), "imports", "build", "paint", "greeting"} in seconds.
    bench_scale.py calls it on registries of 10 to 500 workflows."""
    _cold_once(registry, timeout)
    return [_cold_once(registry, timeout) for _ in range(reps)]


def _terminal_once(registry: str, timeout: float) -> float:
    import pty

    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    env.update(TERM="xterm-256color", COLUMNS=str(SIZE[0]), LINES=str(SIZE[1]))
    main, child = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen([PYTHON, "-m", "snakegate.cli", "--registry", registry, "chat", "--guided",
                             "--user", "bench"], cwd=REPO, env=env, stdin=child, stdout=child, stderr=child,
                            close_fds=True)
    os.close(child)
    seen, painted = b"", None
    try:
        while painted is None and time.monotonic() - start < timeout and proc.poll() is None:
            if select.select([main], [], [], 0.01)[0]:
                seen += os.read(main, 65536)
                if b"snakegate chat" in seen:  # the first frame's header (the greeting follows the registry)
                    painted = time.monotonic() - start
        os.write(main, b"\x11")  # ctrl+q; keep reading so the app can write its last frame and exit
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.05)[0]:
                try:
                    os.read(main, 65536)
                except OSError:
                    break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(main)
    if painted is None:
        raise RuntimeError(f"`snakegate chat` painted nothing recognisable within {timeout:.0f} s")
    return painted


def _warm(registry: str, reps: int) -> list[float]:
    import asyncio

    from snakegate.commands.chat_cmds import build_app
    from snakegate.registry.workflows import Registry
    from snakegate.registry.settings import load_settings
    from textual import events

    settings = load_settings(Path(registry))
    reg = Registry.load(settings.registry_root)

    async def once() -> float:
        done: list[float] = []
        start = time.perf_counter()
        app = build_app(lambda: reg, settings, guided=True, approved_by="bench")

        def hook(message) -> None:
            if isinstance(message, events.Ready) and not done:
                done.append(time.perf_counter())

        async with app.run_test(size=SIZE, message_hook=hook) as pilot:
            while not done:
                await pilot.pause(0.005)
        return done[0] - start

    asyncio.run(once())  # the first in-process app pays for Textual's one-time setup: not warm
    return [asyncio.run(once()) for _ in range(reps)]


def tui_first_paint(quick: bool = False, reps: int = 5, timeout: float = 120) -> dict:
    """The `tui` section for run_all.py. Returns
    {"status": "measured" | "failed", "why": one line for the table,
     "cold_s", "cold_terminal_s", "warm_s": medians in seconds,
     "cold_breakdown_s": {"imports", "build", "paint"} medians of the cold runs,
     "runs": reps, "cold_runs_s", "cold_terminal_runs_s", "warm_runs_s": every run,
     "cold_greeting_s": median time until the registry is loaded and the greeting shown,
     "target": "first paint <= 0.5 s cold (issue 13.4)", "target_s": 0.5, "met": cold_s <= target_s}.
    At least 5 runs each (quick keeps 5 too: a cold start is short, and fewer runs make a noisy median)."""
    reps = max(5, reps)
    registry = str(REPO)
    print(f"5. TUI first paint (snakegate chat, guided; {reps} cold starts, {reps} in a terminal, {reps} warm)",
          flush=True)
    section = {"runs": reps, "target": f"first paint <= {COLD_TARGET_S:g} s cold (issue 13.4)",
               "target_s": COLD_TARGET_S}
    try:
        cold = cold_starts(registry, reps, timeout)
        terminal = [_terminal_once(registry, timeout) for _ in range(reps)]
        warm = _warm(registry, reps)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        return {**section, "status": "failed", "why": str(exc)[:300]}
    cold_s = median([c["total"] for c in cold])
    section.update({
        "status": "measured",
        "cold_s": r3(cold_s), "cold_terminal_s": r3(median(terminal)), "warm_s": r3(median(warm)),
        "cold_breakdown_s": {k: r3(median([c[k] for c in cold])) for k in ("imports", "build", "paint")},
        "cold_greeting_s": r3(median([c["greeting"] for c in cold])),
        "cold_runs_s": [r3(c["total"]) for c in cold], "cold_terminal_runs_s": [r3(t) for t in terminal],
        "warm_runs_s": [r3(w) for w in warm],
        "met": cold_s <= COLD_TARGET_S,
    })
    b = section["cold_breakdown_s"]
    section["why"] = (f"cold {fmt_s(cold_s)} (imports {fmt_s(b['imports'])}, build {fmt_s(b['build'])}, "
                      f"paint {fmt_s(b['paint'])}); greeting after {fmt_s(section['cold_greeting_s'])}; "
                      f"in a terminal {fmt_s(section['cold_terminal_s'])}; "
                      f"warm {fmt_s(section['warm_s'])}; median of {reps}")
    print(f"   {section['why']}", flush=True)
    return section


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
        sys.exit(0)
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=5, help="runs per measure (at least 5)")
    args = ap.parse_args()
    print(json.dumps(tui_first_paint(args.quick, args.reps), indent=2))
