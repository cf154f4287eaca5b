"""What the chat reads about runs: the history's records, one run's facts, the explanation of a run, a diff.

Every function here reads run folders through the core
(`snakegate.provenance.runstore`, `compare`, `origin`) and returns plain
data; it never writes, never runs anything and is called from a background
thread (reading prov.json of a big run takes a moment). Sensitive params are
masked through the workflow's contract before they leave this module; a run
whose workflow is gone from the registry has every param masked. A damaged
record (not a regular file, too big, not JSON, a field of the wrong kind) is
listed as `unreadable` with the reason, never read unbounded. A plan's run is read
as a plan (snakegate.views.plan): its steps, edges, and params as `step.param` by
each step's contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
@dataclass(frozen=True)
class RunFacts:
    """One run as the history's detail view shows it."""

    run_dir: Path
    record: dict
    params: list[tuple[str, str]]                   # (name, shown value), sensitive values masked
    origin: dict | None = None                      # origin.json when the record does not embed it
    explained: dict = field(default_factory=dict)   # the agent's explain_run result (failure, key numbers)
    git: list[tuple[str, str]] = field(default_factory=list)  # (label, SHA) from the PROV record
    prov_note: str | None = None                    # why there are no git facts
    steps: list[tuple[str, str]] = field(default_factory=list)  # a plan's run: (step, "workflow version")
    edges: list[str] = field(default_factory=list)  # a plan's run: "bench.dataset ← clean.cleaned"


def list_runs(runs_dir: Path) -> list[dict]:
    """Every run record, newest first (by start time, then id)."""
    from snakegate.provenance import runstore

    records = runstore.list_runs(runs_dir)
    return sorted(records, key=lambda r: (str(r.get("started") or ""), str(r.get("run_id"))), reverse=True)


def find(runs_dir: Path, run_id: str) -> Path:
    from snakegate.provenance import runstore

    return runstore.find_run(runs_dir, run_id)


def _schema_of(registry, workflow_id: str | None) -> dict | None:
    wf = registry.get(workflow_id) if workflow_id else None
    return wf.schema if wf is not None else None


def run_facts(registry, settings, run_dir: Path) -> RunFacts:
    from snakegate.provenance import compare, runstore
    from snakegate.provenance.origin import read_origin
    from snakegate.views.facts import pins
    from snakegate.views.plan import read as read_plan, with_arrows
    from snakegate.tui.present import param_lines

    record, problem = runstore.load_run(run_dir)
    if not record:  # a damaged run.json: shown as damaged, with the reason, never read further
        record = {"status": runstore.UNREADABLE, "unreadable": problem}
    record.setdefault("run_id", run_dir.name)
    invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
    plan = read_plan(run_dir, registry, record) if record.get("status") != runstore.UNREADABLE else None
    if plan is not None:  # each step's params by its own contract, as `step.param`
        params = [(f"{step.name}.{name}", value) for step in plan.steps
                  for name, value in param_lines(step.schema, with_arrows(step.params))]
    else:
        params = param_lines(_schema_of(registry, record.get("workflow") or invocation.get("workflow")),
                             invocation.get("params") or {})
    git, note = [], None
    try:
        git = pins(compare.load_prov(run_dir))
        if plan is not None:  # one `workflow content hash` would be one step's: the plan's pins are its own
            git = [(label, sha) for label, sha in git if label == "registry commit"]
    except compare.ProvMissing as exc:
        note = str(exc)
    return RunFacts(run_dir=run_dir, record=record, params=params, origin=read_origin(run_dir), git=git,
                    prov_note=note, explained=explain(registry, settings, run_dir),
                    steps=[(s.name, s.label) for s in plan.steps] if plan is not None else [],
                    edges=[e.text for e in plan.edges] if plan is not None else [])


def explain(registry, settings, run_dir: Path) -> dict:
    """The agent's explain_run for the run: the facts the model gets (failure, key numbers, cancel), through
    the action's one definition, with every sensitive value the run holds scrubbed. {} when it cannot say."""
    from snakegate.agent.actions.platform import ActionContext, call_action

    outcome = call_action(ActionContext(registry, settings), "explain_run", {"run_id": run_dir.name})
    return outcome.result if outcome.ok else {}


def diff(registry, registry_root: Path, run_a: Path, run_b: Path) -> dict:
    """provenance.compare.diff_runs with each run's declared outputs and its sensitive params hidden as
    `snakegate diff` hides them (by their keyed hash, so a changed secret still shows as changed), and the two
    verdicts check by check (`verdict`, snakegate.views.verdict.changes)."""
    from snakegate.provenance import compare, runstore, secrets

    from snakegate.views.plan import read as read_plan

    def workflow(run_dir):
        wf_id = runstore.read_run(run_dir).get("workflow")
        return registry.get(wf_id) if wf_id else None

    def outputs(wf):
        return {name: o.model_dump() for name, o in wf.manifest.outputs.items()} if wf else None

    def redactor(run_dir, wf):
        key = secrets.registry_key(registry_root)
        plan = read_plan(run_dir, registry)
        schema = plan.scope()[0] if plan is not None else wf.schema if wf is not None else None  # a plan: {step: ...}
        if schema is None:  # the workflow is gone: nothing can be proven safe to show
            return lambda params: {k: v if secrets.is_keyed_hash(v) else secrets.keyed_hash(key, v)
                                   for k, v in params.items()}
        return lambda params: secrets.redact(schema, params, key)[0]

    wa, wb = workflow(run_a), workflow(run_b)
    result = compare.diff_runs(run_a, run_b, (outputs(wa), outputs(wb)),
                               redact=(redactor(run_a, wa), redactor(run_b, wb)))
    from snakegate.views.verdict import changes

    verdict = changes(runstore.read_run(run_a), runstore.read_run(run_b))
    if verdict is not None:  # each check A -> B, as `snakegate diff` shows it
        result["verdict"] = verdict
    return result
