"""Registry check cost (item 4): `snakegate check <id>` per workflow and `snakegate check` on the whole registry,
with its workflows gathered in parallel (the default) and in one process (`-j 1`).

The wall is reported whatever the verdict (a workflow with findings still costs
what it costs); the exit code is kept beside it. When the installed snakegate
has no `check` command the row says "pending".

Run alone: python bench/bench_check.py [--quick]
"""

from __future__ import annotations

import json
import sys

from common import REPO, SNAKEGATE, fmt_s, median, r3, run_timed


def _has_check() -> bool:
    return run_timed([SNAKEGATE, "check", "--help"], cwd=REPO, timeout=60)[1] == 0


def registry_check(quick: bool, reps: int, timeout: float) -> dict:
    from snakegate.registry.workflows import Registry

    print("4. registry check (snakegate check)", flush=True)
    if not _has_check():
        print("  pending: this snakegate has no `check` command yet", flush=True)
        return {"status": "pending", "why": "`snakegate check` is not available yet", "rows": []}
    registry = Registry.load(REPO)
    # the whole registry gathered in parallel (the default: one process per core) and in one process (-j 1)
    cases = [(wf_id, [wf_id]) for wf_id in registry.ids()] + [("whole registry", []),
                                                              ("whole registry, -j 1", ["-j", "1"])]
    rows = []
    for case, ids in cases:
        cmd = [SNAKEGATE, "--registry", str(REPO), "check", *ids]
        walls, codes, tails = [], [], []
        for _ in range(reps):
            wall, code, tail = run_timed(cmd, cwd=REPO, timeout=timeout)
            walls.append(wall)
            codes.append(code)
            tails.append(tail)
        row = {"case": case, "check_s": r3(median(walls)), "walls_s": [r3(w) for w in walls], "runs": reps,
               "exit_codes": sorted(set(codes))}
        if any(c not in (0, 1) for c in codes):
            row["problems"] = [t for t, c in zip(tails, codes) if c not in (0, 1)][:1]
        rows.append(row)
        verdict = "ok" if codes[-1] == 0 else f"exit {codes[-1]}"
        print(f"  {case:<28} check {fmt_s(row['check_s']):>9}   ({verdict})", flush=True)
    return {"status": "measured", "rows": rows, "target": "none set (reported for CI planning)"}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(json.dumps(registry_check(quick, reps=1 if quick else 3, timeout=600), indent=2))
