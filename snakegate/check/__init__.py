"""`snakegate check`: prove a workflow's contract against its Snakefile, statically (no job runs).

- `reading` reads a workflow (Snakefile, includes, modules, scripts) into plain data; `draft` reuses it.
- `gather` is the edge: files, the gate on each example, Snakemake's DAG, lint and format -> `WorkflowFacts`.
- One module per proof, each pure over the facts: `keys` (config keys, validate()), `ruleio` (rule IO, hidden
  inputs, declared outputs), `edges` (typed edges, artifact types), `examples` (contract and examples),
  `unprovable` (what cannot be proven: wrappers, conda, downloads, hard-coded paths), `preflights` (a
  preflight.py's signature and purity), `declarations` (what each output declares it holds), `evaluate`
  (workflow.yaml's acceptance checks), `hygiene`.
- `proofs` lists them in order and runs them, failing closed.
- `changes` says which workflows a git change touches (`--changed`); `parallel` gathers folders in worker
  processes; `report` is the whole check of some folders (`check_workflows`).
"""

from snakegate.check.facts import ExampleFacts, Finding, WorkflowFacts
from snakegate.check.changes import Changes, changed_since, changes
from snakegate.check.gather import gather, select
from snakegate.check.proofs import CODES, PROOFS, run_checks
from snakegate.check.report import CheckReport, check_workflows

__all__ = ["CODES", "PROOFS", "Changes", "CheckReport", "ExampleFacts", "Finding", "WorkflowFacts", "changed_since",
           "changes", "check_workflows", "gather", "run_checks", "select"]
