"""Contributing a workflow: `draft` (and `draft_contract`) turn an existing Snakemake workflow into a
contribution; `testcases` runs its test invocations for `snakegate test`.
"""
