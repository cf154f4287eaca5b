"""Which settings of a Snakemake profile `snakegate run` lets reach Snakemake.

A profile may say how and where the gated jobs run (executor, resources, retries, software
deployment, cluster plugin settings), never what is built or whether anything runs: a profile
with `dryrun: true`, `until:`, `forcerun:`, `config:` or a target would turn an approved
invocation into something else while the run still looked like it. So this is an allow-list:
every key not listed is refused with a sentence naming it. The README lists the same keys.

`checked_profile()` finds the profile file the way Snakemake does (its own `get_profile_dir`),
reads it as plain YAML (a YTE template, `__use_yte__`, is refused like any unknown key) and
returns its absolute path, which the runner hands to Snakemake. Nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from ruamel.yaml import YAML, YAMLError

from snakegate.errors import ExitCode, UserError

# Snakemake option names (long form, without dashes in front) a profile may set.
ALLOWED_KEYS = frozenset({
    # where and how many
    "executor", "jobs", "cores", "local-cores",
    # resources and threads
    "resources", "default-resources", "set-resources", "set-threads", "set-resource-scopes", "max-threads",
    # scheduling and robustness
    "latency-wait", "max-jobs-per-second", "max-jobs-per-timespan", "max-status-checks-per-second",
    "seconds-between-status-checks", "retries", "restart-times", "keep-going", "scheduler",
    "scheduler-ilp-solver", "scheduler-solver-path", "groups", "group-components",
    # software deployment
    "software-deployment-method", "sdm", "use-conda", "use-apptainer", "use-singularity", "use-envmodules",
    "conda-prefix", "conda-frontend", "apptainer-prefix", "singularity-prefix", "apptainer-args",
    "singularity-args", "container-image",
    # the jobs' environment and Snakemake's own output
    "envvars", "jobname", "jobscript", "precommand", "shadow-prefix", "printshellcmds", "show-failed-logs",
    "nocolor",
})
# Executors that run no job: `dryrun` only plans, `touch` marks outputs current without making them.
REFUSED_EXECUTORS = frozenset({"dryrun", "touch"})
PROFILE_ENV = "SNAKEMAKE_PROFILE"


def normal_key(key: str) -> str:
    return key.replace("_", "-")


def check_executor(name: str | None, where: str = "--executor") -> None:
    if name in REFUSED_EXECUTORS:
        what = "it only plans" if name == "dryrun" else "it only marks outputs current"
        raise UserError(f"{where} {name} runs no job ({what}); snakegate run runs the gated jobs: use local "
                        "(the default) or a cluster executor")


def problems(data, executor: str | None) -> list[str]:
    """Sentences for every key of a parsed profile that snakegate does not pass to Snakemake (pure)."""
    if not isinstance(data, dict):
        return ["the profile must be a mapping of Snakemake option names to values"]
    prof_executor = data.get("executor")
    plugin = executor or (prof_executor if isinstance(prof_executor, str) else None)
    out = []
    for key in data:
        if not isinstance(key, str):
            out.append(f"`{key!r}` is not a Snakemake option name")
            continue
        name = normal_key(key)
        if name in ALLOWED_KEYS:
            continue
        if plugin and plugin not in ("local",) and name.startswith(f"{plugin}-"):
            continue  # the executor plugin's own settings, e.g. slurm-logdir
        out.append(f"`{key}` is not one of the options a profile may set under snakegate run: it could change "
                   "what is built or whether the gated jobs run")
    if isinstance(prof_executor, str) and prof_executor in REFUSED_EXECUTORS:
        out.append(f"`executor: {prof_executor}` runs no job")
    return out


def checked_profile(profile: str | None, executor: str | None) -> str | None:
    """The profile file to hand Snakemake (absolute), after every key passed the allow-list; None
    when no profile is given (by --profile or $SNAKEMAKE_PROFILE). UserError names a refused key."""
    name = profile or os.environ.get(PROFILE_ENV)
    if not name:
        return None
    from snakemake.cli import get_profile_dir  # Snakemake's own lookup: a path, a name in the config dirs

    found = get_profile_dir(name)
    if found is None:
        origin = "--profile" if profile else f"${PROFILE_ENV}"
        raise UserError(f"{origin} {name}: no Snakemake profile there (a folder with config.yaml or profile.yaml, "
                        "or the YAML file itself)")
    path = Path(found[1]).resolve()
    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError) as exc:
        raise UserError(f"profile {path} cannot be read: {exc}") from None
    found_problems = problems(data if data is not None else {}, executor)
    if found_problems:
        raise UserError(f"profile {path} is refused:\n  - " + "\n  - ".join(found_problems)
                        + "\n  allowed: " + ", ".join(sorted(ALLOWED_KEYS)) + " and <executor>-* plugin settings",
                        ExitCode.USAGE)
    return str(path)
