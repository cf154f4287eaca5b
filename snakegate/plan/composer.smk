# The plan gate's DAG step (snakegate/plan/compose.py): the plan's steps as Snakemake modules, built, never run.
from snakegate.plan.compose import declare

declare(workflow, config["snakegate_steps"])


rule snakegate_plan_all:
    default_target: True
    input:
        config["snakegate_targets"],
