"""Who writes a run's PROV record and seal (issue 30: memory at 10,000 jobs): `snakegate run`, after Snakemake has
exited, while it is still Snakemake's parent; Snakemake itself when it runs alone or its front end died
(tests/run/test_faults.py kills the front end for real). Real processes: a child started the way the runner
starts Snakemake, with and without its parent alive."""

from __future__ import annotations

import os
import subprocess
import sys

from snakegate.run.entry import front_end_records
from snakegate.run.handshake import FRONT_END_ENV

ASK = "from snakegate.run.entry import front_end_records; print(front_end_records())"


def _child_answer(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != FRONT_END_ENV}
    if env_value is not None:
        env[FRONT_END_ENV] = env_value
    return subprocess.run([sys.executable, "-c", ASK], env=env, capture_output=True, text=True,
                          timeout=120, check=False).stdout.strip()


def test_a_snakemake_started_by_a_living_front_end_leaves_the_record_to_it():
    assert _child_answer(str(os.getpid())) == "True"


def test_plain_snakemake_writes_its_own_record():
    assert _child_answer(None) == "False"


def test_a_snakemake_whose_named_front_end_is_not_its_parent_writes_its_own_record():
    # a front end that died: Snakemake now has another parent, whatever the environment still says
    assert _child_answer(str(os.getppid())) == "False"
    assert _child_answer("not-a-pid") == "False"


def test_this_process_is_never_its_own_front_end(monkeypatch):
    monkeypatch.setenv(FRONT_END_ENV, str(os.getpid()))
    assert front_end_records() is False
