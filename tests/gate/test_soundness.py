"""What the gate accepts runs: run configs drawn over each contract with inputs made from the demo data
(tests/soundness_draws.py: row subsets, rare classes, gaps, stray text, infinity, column subsets, cut VCFs
and GFF3s), the ones the gate accepts run with the real Snakemake, and none fails in a job.

To stay within a couple of minutes on a loaded 2-core machine, the cheap workflows only, two accepted
configs each, run together as the steps of one plan (one `snakegate run`, one Snakemake: each step is
gated exactly as the workflow alone). bench/bench_soundness.py measures all seven workflows, one run per
config, and lists what fails (README: "What the gate proves").
"""
import json

from registry_copies import new_run, run_names, snakegate
from soundness_draws import SoundRegistry, accepted

CHEAP = ("tabular-profile", "classifier-benchmark", "variant-annotation")
PER_WORKFLOW = 2


def test_configs_the_gate_accepts_run_without_a_failed_job(tmp_path):
    reg = SoundRegistry.make(tmp_path / "registry", CHEAP)
    steps = {}
    for workflow in CHEAP:
        _, _, configs = accepted(reg, workflow, PER_WORKFLOW, seed=1, tries=80)
        assert len(configs) == PER_WORKFLOW, f"the gate accepted too few drawn {workflow} configs"
        for i, config in enumerate(configs):
            steps[f"{workflow.replace('-', '_')}_{i}"] = {"workflow": workflow, "params": config["params"]}
    (reg.root / "drawn.yaml").write_text(json.dumps({"plan": "drawn-configs", "steps": steps}))
    before = run_names(reg.root)
    proc = snakegate(reg.root, "run", "drawn.yaml", "--cores", "2", timeout=900)
    record = json.loads((new_run(reg.root, before) / "run.json").read_text())
    failed = (record.get("failed_rule") or "").split("__")[0].removeprefix("wf_")
    assert proc.returncode == 0 and record["status"] == "succeeded", (
        f"an accepted config failed in {record.get('failed_rule')}: {record.get('error')}\n"
        f"its config: {steps.get(failed)}")
