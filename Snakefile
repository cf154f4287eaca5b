# snakegate top-level Snakefile: the plain-snakemake entry to the registry.
#
#   snakemake --configfile runs/<run_id>/config.yaml --cores 2          # laptop
#   snakemake --configfile run.yaml --profile profiles/slurm            # Slurm (README: Running on a cluster)
#
# Order matters: the run config is gated at parse time, before any DAG or job
# exists; only then is the workflow included as a module, from the run folder's
# immutable copy runs/<run_id>/workflow/, with its outputs under runs/<run_id>/,
# snakegate_all asks for the workflow's own default target and its declared outputs,
# and the handlers keep run.json and the PROV record current.
# Each job's stderr goes to runs/<run_id>/stderr/; SIGTERM/SIGINT are a recorded cancel.
# Inside each job Snakemake reads this file again: there snakegate/run/jobgate.py checks the job
# against its run's record instead of gating it in full.

import time

snakegate_parse_started = (time.perf_counter(), time.process_time())
if workflow.is_main_process:
    from snakegate.run.entry import GateRefused
    from snakegate.run.prepare import prepare
else:  # Snakemake re-reading this file inside a job: the light gate, no DAG, no input hashes
    from snakegate.run.jobgate import Refused as GateRefused, prepare

try:
    snakegate_run = prepare(config, workflow.basedir, workflow.overwrite_configfiles, workflow.exec_mode)
except GateRefused as refusal:
    raise WorkflowError(str(refusal)) from None
snakegate_run.keep_job_stderr()


# The workflow as a Snakemake module with its outputs under the run folder, its rules as wf_<rule> (Snakemake's
# own `module` / `use rule * from ... as wf_*`); a plan, each step as such a module under runs/<run_id>/steps/
# <step>/ with its rules as wf_<step>__<rule>, one DAG (snakegate/plan/compose.py).
snakegate_run.declare_modules(workflow)

# every job's inputs are checked against what their producer (or the staging) recorded before it runs,
# and its outputs are hashed when it ends (snakegate/run/guard.py)
snakegate_run.guard_jobs(workflow)


# Built by default: what the workflow's own default target asks for (so a run builds what a standalone
# run and `snakegate test` build) and every declared output. Defined after the module, so that
# workflow.default_target is still the workflow's own here; default_target: True then makes this one ours.
rule snakegate_all:
    default_target: True
    input:
        snakegate_run.targets,
        snakegate_run.workflow_default_target(workflow),


# the contract's per-rule resources (workflow.yaml), so the scheduler gets them without the user writing them
try:
    snakegate_run.apply_resources(workflow)
except GateRefused as refusal:
    raise WorkflowError(str(refusal)) from None
if not workflow.is_main_process:
    # the job's own record: scheduler job id, node, its start and end, snakegate's time in it
    snakegate_run.record_job(workflow, snakegate_parse_started)


onstart:
    try:
        snakegate_run.on_start(log, touch=workflow.touch, workflow=workflow)
    except GateRefused as refusal:
        raise WorkflowError(str(refusal)) from None


onsuccess:
    try:
        snakegate_run.on_success(log)
    except GateRefused as refusal:
        raise WorkflowError(str(refusal)) from None


onerror:
    snakegate_run.on_error(log)
