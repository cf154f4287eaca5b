"""Does a recorded run prove itself? What `snakegate verify`, `rerun` and `fork` check before they trust a run
folder: its invocation.json names the id its invocation hashes to; its config.yaml holds that invocation's
params; its workflow copy has the invocation's content hash; its staging record stages exactly the gated
inputs; its PROV record's gate decision names that id; and its seal (snakegate.provenance.seal) still
holds and is the one the registry's run index recorded.

Only reads. A run made before a check existed (no seal, no staging record) is not refused for lacking it:
`unsealed` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from snakegate.provenance import compare, runstore, seal
from snakegate.provenance.hashing import canonical_json, sha256_text, workflow_hash
from snakegate.run import jobgate, pinning, staged


@dataclass
class RecordCheck:
    invocation_id: str | None
    problems: list[str] = field(default_factory=list)
    seal: seal.SealCheck | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and (self.seal is None or self.seal.ok)

    def sentences(self) -> list[str]:
        return self.problems + (self.seal.problems if self.seal else [])


def check_record(run_dir: Path, registry_root: Path) -> RecordCheck:
    run_dir, root = Path(run_dir), Path(registry_root)
    recorded = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
    claimed = recorded.get("invocation_id")
    invocation = recorded.get("invocation")
    out = RecordCheck(claimed if isinstance(claimed, str) else None)
    if not isinstance(claimed, str) or not isinstance(invocation, dict):
        out.problems.append(f"{runstore.INVOCATION_JSON} is missing or damaged: nothing says what the run was")
        out.seal = seal.check(run_dir, root)
        return out
    actual = sha256_text(canonical_json(invocation))
    if actual != claimed:
        out.problems.append(f"{runstore.INVOCATION_JSON} names invocation {claimed[:12]}… but holds one that "
                            f"hashes to {actual[:12]}…: it was edited after the gate")
    # one workflow, or each step of a plan: ("" | "steps.<step>.", its invocation, its folder in the run)
    if recorded.get("kind") == "plan":
        parts = [(f"steps.{name}.", inv, run_dir / "steps" / name) for name, inv in
                 sorted((invocation.get("steps") or {}).items()) if isinstance(inv, dict)]
    else:
        parts = [("", invocation, run_dir)]
    config_path = run_dir / runstore.CONFIG_YAML
    if config_path.is_file():
        config = jobgate._read_yaml(config_path)
        if not isinstance(config, dict) or config.get("invocation_id") != claimed:
            out.problems.append(f"{runstore.CONFIG_YAML} is not invocation {claimed[:12]}…")
        else:
            for prefix, inv, _folder in parts:
                given = ((config.get("steps") or {}).get(prefix[6:-1]) or {}).get("params") if prefix else \
                    config.get("params")
                if not jobgate.params_match(given or {}, inv.get("params"), root):
                    out.problems.append(f"{runstore.CONFIG_YAML}'s {prefix}params are not those of invocation "
                                        f"{claimed[:12]}…: they were edited after the gate")
    gated = {}
    for prefix, inv, folder in parts:
        copy = pinning.copy_of(folder)
        if (copy / "workflow.yaml").is_file() and workflow_hash(copy) != inv.get("workflow_hash"):
            shown = copy.relative_to(run_dir).as_posix()
            out.problems.append(f"the run's workflow copy ({shown}/) no longer has the content hash "
                                f"{str(inv.get('workflow_hash'))[:12]}… it was gated with")
        gated.update({prefix + k: v for k, v in (inv.get("inputs") or {}).items()})
    entries = staged.read_manifest(run_dir)
    if entries is not None:
        problem = staged.manifest_problem(entries, gated)
        if problem:
            out.problems.append(problem)
    try:
        prov = compare.load_prov(run_dir)
    except compare.ProvMissing:
        prov = None
    if prov is not None:
        gates = [compare.plain(a.get("sg:invocationId")) for a in (prov.get("activity") or {}).values()
                 if "sg:GateDecision" in compare.types_of(a)]
        if gates and any(g != claimed for g in gates):
            out.problems.append(f"prov.json's gate decision names invocation {str(gates[0])[:12]}…, not "
                                f"{claimed[:12]}…")
    out.seal = seal.check(run_dir, root)
    return out


def refusal_text(run_dir: Path, check: RecordCheck, doing: str) -> str:
    """Why a run whose record does not prove itself is not `doing` (rerun, forked)."""
    lines = [f"run {Path(run_dir).name}'s record does not prove itself, so it is not {doing}:"]
    lines += [f"  - {s}" for s in check.sentences()]
    lines.append(f"  `snakegate verify {Path(run_dir).name}` lists what changed; run the workflow afresh with "
                 "`snakegate run`")
    return "\n".join(lines)
