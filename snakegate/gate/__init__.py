"""The gate: nothing runs unless `prove.gate()` says ok.

- `prove`: (registry, invocation, settings) -> GateResult, the canonical invocation and its id.
- `preflight`: a workflow's own cross-field rules; `tools`: its external tools on PATH.
- `dag`: Snakemake's DAG for the params, through Snakemake's API, without a job.
- `sheet_paths`: sample-sheet copies with the paths the gate resolved, for Snakemake run elsewhere.
"""
