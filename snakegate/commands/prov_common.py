"""What the provenance commands (prov_cmds.py, lineage_cmds.py, diff_cmds.py, export_cmds.py) share: a run
folder named on the command line, the workflow it executed, that workflow's declared outputs.

Looks up only; prints nothing and never writes.
"""

from __future__ import annotations

from pathlib import Path


def run_folder(ctx, ref: str) -> Path:
    from snakegate.commands.run_cmds import find_run_or_fail
    return find_run_or_fail(ctx, ref)


def workflow_of(ctx, run_dir: Path):
    """The workflow a run executed (its run folder's copy, else the registry's; None when gone)."""
    from snakegate.views.facts import workflow_of as from_views
    return from_views(ctx.registry, run_dir)


def declared_outputs(wf) -> dict | None:
    return {name: out.model_dump() for name, out in wf.manifest.outputs.items()} if wf else None
