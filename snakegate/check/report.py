"""The whole `snakegate check` of some workflow folders: gather them (in parallel), snakefmt once, the proofs.

`check_workflows` is what the CLI calls: the facts of every folder (snakegate.check.parallel), the batched
format check (snakegate.check.gather), then the pure proofs, in the folders' order, into one `CheckReport`.
It writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snakegate.check.facts import Finding
from snakegate.check.gather import gather_format
from snakegate.check.parallel import gather_all
from snakegate.check.proofs import run_checks


@dataclass
class CheckReport:
    workflows: list[str]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def as_json(self) -> dict:
        return {"ok": self.ok, "workflows": self.workflows, "findings": [f.as_json() for f in self.findings]}


def check_workflows(folders: list[Path], registry, settings, *, hygiene: bool = True,
                    jobs: int | None = None) -> CheckReport:
    """Gather every folder (in parallel processes, at most `jobs`, default the usable cores), then run the
    pure proofs in the folders' order: the report does not depend on which worker finished first."""
    all_facts = gather_all(folders, registry, settings, hygiene=hygiene, jobs=jobs)
    if hygiene:
        gather_format(all_facts, settings.registry_root)
    findings: list[Finding] = []
    for facts in all_facts:
        findings.extend(run_checks(facts))
    return CheckReport(workflows=[p.name for p in folders], findings=findings)
