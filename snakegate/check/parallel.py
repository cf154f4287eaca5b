"""Gather many workflow folders at once: one worker process per usable core, results in the folders' order.

Each folder's gathering (its examples gated, its DAGs built, its lint, each in the sandbox) is independent
of the others', so `gather_all` hands folders to forked workers that inherit the loaded registry (nothing of
it is pickled) and returns their `WorkflowFacts` in the order given, whatever order they finish in. Fail
closed: a worker that dies leaves a crash finding for the folder it held, never a missing workflow. One
folder, or `jobs=1`, gathers in this process. It writes nothing.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from snakegate.check.facts import WorkflowFacts
from snakegate.check.gather import gather, rel_path

# what forked workers inherit: (registry, settings, hygiene); set only while a pool is being started
_INHERITED: tuple | None = None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def gather_all(folders: list[Path], registry, settings, *, hygiene: bool = True,
               jobs: int | None = None) -> list[WorkflowFacts]:
    workers = min(len(folders), jobs or usable_cores())
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [gather(folder, registry, settings, hygiene=hygiene) for folder in folders]
    global _INHERITED
    _INHERITED = (registry, settings, hygiene)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_gather_inherited, folder) for folder in folders]
            return [_result(future, folder, settings.registry_root) for future, folder in zip(futures, folders)]
    finally:
        _INHERITED = None


def _gather_inherited(folder: Path) -> WorkflowFacts:
    registry, settings, hygiene = _INHERITED
    return gather(folder, registry, settings, hygiene=hygiene)


def _result(future, folder: Path, root: Path) -> WorkflowFacts:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - fail closed: a lost worker is an error finding for its folder
        facts = WorkflowFacts(id=folder.name, folder=str(folder.resolve()), rel=rel_path(folder, root),
                              root=str(Path(root).resolve()))
        facts.crashes.append(("manifest_invalid", f"snakegate could not check this workflow: its worker process "
                                                  f"failed ({type(exc).__name__}: {exc}); run "
                                                  f"`snakegate check --jobs 1 {folder.name}` to see why"))
        return facts
