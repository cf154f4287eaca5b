"""Plans: several registry workflows composed into one gated, approved, recorded run.

- `config`: a plan config's shape, its steps and the `{from, output}` references between them (pure).
- `prove`: the plan gate, every step gated and every reference checked against the declared output.
- `compose`: the plan as Snakemake modules under one DAG (and `composer.smk`, the gate's DAG step).
"""
