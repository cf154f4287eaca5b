"""The gate fuzzer in the test suite: a few hundred hypothesis-made run configs across every workflow.

Each goes through the gate (a few through the DAG step too, some through YAML text first) and must come
back refused with a message, or accepted with the independent oracle's agreement (tests/config_fuzz.py).
bench/bench_fuzz.py runs the same fuzzer with 10,000 examples and prints the counts.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from config_fuzz import FuzzRegistry, Oracle, fuzz_one, run_configs


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory):
    fz = FuzzRegistry.make(tmp_path_factory.mktemp("fuzz"))
    return fz, Oracle(fz)


def test_the_gate_never_raises_and_never_accepts_what_the_oracle_refuses(fuzz):
    fz, oracle = fuzz
    counts: Counter = Counter()

    @settings(max_examples=300, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def one(data):
        example = data.draw(run_configs(fz))
        outcome = fuzz_one(fz, oracle, example)
        counts[outcome.kind] += 1
        assert outcome.kind in ("accepted", "refused"), f"{outcome.kind} for {example}: {outcome.detail}"

    one()
    # a fuzzer that only ever refuses (or only accepts) proves nothing
    assert counts["accepted"] >= 15 and counts["refused"] >= 100, counts
