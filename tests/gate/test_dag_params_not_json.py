"""A job param that JSON cannot hold (NaN from a sample sheet's empty cell: pandas reads `fastp_extra` as NaN in
rna-seq-star-deseq2) must not break the DAG's answer from the sandbox, which is JSON without NaN: `snakegate
check` then said "Snakemake cannot build the DAG ... Out of range float values are not JSON compliant" for a
workflow Snakemake builds. Pure: Snakemake's own Params list, the DAG's plain-data conversion, json.
"""
import json
import math

from snakemake.iocontainers import Params

from snakegate.gate.dag import _params


def test_a_nan_or_infinite_param_reaches_the_dag_as_text_and_the_answer_is_json():
    params = Params(fromdict={"extra": float("nan"), "cap": float("inf"), "n": 3, "label": "x"})
    plain = _params(params)
    assert plain == {"extra": "nan", "cap": "inf", "n": 3, "label": "x"}
    assert json.loads(json.dumps(plain, allow_nan=False)) == plain


def test_finite_floats_stay_numbers():
    plain = _params(Params(fromdict={"alpha": 0.05}))
    assert plain == {"alpha": 0.05} and not math.isnan(plain["alpha"])
