"""A run: from a gated invocation to a finished record.

- `runner`: `snakegate run` (run folder, detached Snakemake, progress, cancel).
- `prepare`, `entry`: the top-level Snakefile's first step and its handlers; `jobgate`: the light gate
  inside each job; `jobstderr`: each job's stderr into the run folder.
- `pinning`: the run's workflow copy and the invocation pin; `record`: what the record says at the end;
  `signals`: a stop signal becomes a recorded cancel; `stale`: runs nobody finished; `verdict`: the finished
  run judged by its workflow's checks, into run.json.
- `fork`, `reuse`: a fork's plan and the parent outputs it may reuse; `cluster`, `profiles`: where jobs run.

Kept light on import: `jobgate` runs inside every cluster job.
"""
