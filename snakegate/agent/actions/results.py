"""The `summarize_run` action: a finished run's summary, as the conversation receives it when a run ends.

The same summary (agent/results.py: status, verdict with each check's value and, for a failing one, what
it means and which params to look at; the failing rule and real error; key numbers of the declared JSON
outputs; the first rows of the declared tables; what the run itself suggests for a failing check's params;
the params) for any run of this registry, as data plus the compact `text` the conversation's note holds.
The guided dialogue reads it when a run's note arrives; a model may ask for an older run's whole summary
(a later request carries only the first lines of an older note). Reads only the run folder; writes nothing.
"""

from __future__ import annotations

from snakegate.agent import results
from snakegate.agent.actions.base import ActionContext
from snakegate.agent.actions.limits import PathView
# one definition of how an action finds a run from a reference (and learns its sensitive values)
from snakegate.agent.actions.runs import RunArgs, _run_dir  # noqa: PLC2701
from snakegate.agent.redact import secret_strings


def run_summary(ctx: ActionContext, run_ref: str) -> dict:
    """The summary of the run `run_ref` names (Refused when it names none), masked for this conversation."""
    run_dir = _run_dir(ctx, run_ref)
    view = PathView(ctx.settings.registry_root, ctx.settings.data_roots)
    return results.summarize(run_dir, view, secret_strings([*ctx.vault.values(), *ctx.known_secrets]))


def summarize_run(ctx: ActionContext, args: RunArgs):
    summary = run_summary(ctx, args.run_id)
    verdict = (summary.get("verdict") or {}).get("status")
    return (summary | {"text": results.text(summary)},
            f"summarized run {summary.get('run_id')}: {summary.get('status')}"
            + (f", verdict {verdict}" if verdict else ""), None)
