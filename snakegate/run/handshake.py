"""What a run's head and its jobs agree on: the environment variables that carry a run to its jobs
and the refusal type the top-level Snakefile stops on.

Plain Python only (it is imported inside every cluster job, before anything else of snakegate).
"""

from __future__ import annotations

# Set by the head for its jobs: the run they belong to (plain snakemake's config may have no run_id).
JOB_RUN_ENV = "SNAKEGATE_JOB_RUN"
# Set by `snakegate run` for its Snakemake child only: the invocation id the gate approved.
EXPECTED_ENV = "SNAKEGATE_EXPECTED_INVOCATION"
# Set by `snakegate run` for its Snakemake child only: the front end's pid. While that process is still Snakemake's
# parent when the run ends, it writes the PROV record and the seal after Snakemake exits (snakegate.run.finish), so
# the record is never built beside the DAG of a 10,000-job run; a Snakemake whose front end died writes them itself.
FRONT_END_ENV = "SNAKEGATE_FRONT_END_PID"
# Set by the head for its jobs: the invocation id it gated (a job proves its run's record against it,
# and against the registry's run index when the environment does not reach the job).
JOB_INVOCATION_ENV = "SNAKEGATE_JOB_INVOCATION"


class Refused(Exception):
    """Any refusal at Snakefile parse time (snakegate.run.entry.GateRefused is one): Snakemake stops before any job."""
