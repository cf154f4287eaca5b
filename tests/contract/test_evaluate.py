"""Issue 25 §1: a run's verdict from workflow.yaml's `evaluate:` checks over real output files.

The verdict is pure over `read_output`; here it reads real files through the bounded reader
(snakegate.contract.output_files): JSON documents, CSV/TSV tables with missing and hostile cells, files too
big to read, a FIFO, a symbolic link, bytes that are not what the job recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from snakegate.contract import output_files
from snakegate.contract.evaluate import aggregate, overall, verdict
from snakegate.contract.output_files import OutputFile, reader
from snakegate.models import Manifest

OUTPUTS = {
    "metrics": {"path": "results/metrics.json", "type": "json", "description": "m"},
    "table": {"path": "results/table.csv", "type": "csv-table", "description": "t"},
    "extra": {"path": "results/extra.json", "type": "json", "description": "e", "when": {"make_extra": True}},
}


def manifest(**checks) -> Manifest:
    return Manifest.model_validate({
        "id": "wf", "version": "1.0.0", "title": "A workflow", "description": "A workflow for tests.",
        "maintainers": [{"name": "t"}], "trust": "community", "outputs": OUTPUTS,
        "evaluate": {name: {"says": f"{name} failed", **c} for name, c in checks.items()}})


def write(folder: Path, name: str, content) -> Path:
    path = folder / "results" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def judge(folder: Path, params: dict | None = None, sha256: dict | None = None, **checks) -> dict:
    files = {name: OutputFile(folder / o["path"], o["type"], sha256=(sha256 or {}).get(name))
             for name, o in OUTPUTS.items()}
    return verdict(manifest(**checks), params or {}, reader(files))


def one(found: dict) -> dict:
    (check,) = found["checks"]
    return check


def test_a_json_value_that_meets_its_threshold_passes_and_one_that_does_not_fails(tmp_path):
    write(tmp_path, "metrics.json", {"background": {"ks_pvalue": 0.37}, "auc": 0.55})
    found = judge(tmp_path, ks={"output": "metrics", "value": "/background/ks_pvalue", "test": ">=",
                                "threshold": 0.001, "params": ["background_roi"]},
                  auc={"output": "metrics", "value": "/auc", "test": ">", "threshold": 0.7})
    assert found["status"] == "fail"
    ks, auc = found["checks"]
    assert ks == {"name": "ks", "status": "pass", "value": 0.37, "test": ">=", "threshold": 0.001,
                  "says": "ks failed", "params": ["background_roi"], "output": "metrics",
                  "measure": "/background/ks_pvalue"}
    assert (auc["status"], auc["value"], auc["threshold"]) == ("fail", 0.55, 0.7)


@pytest.mark.parametrize("test, passes", [(">", False), (">=", True), ("<", False), ("<=", True), ("==", True),
                                          ("!=", False)])
def test_each_comparison_holds_the_value_against_the_threshold(tmp_path, test, passes):
    write(tmp_path, "metrics.json", {"x": 2})
    check = one(judge(tmp_path, c={"output": "metrics", "value": "/x", "test": test, "threshold": 2.0}))
    assert check["status"] == ("pass" if passes else "fail")


def test_a_param_threshold_is_the_runs_value_of_that_param(tmp_path):
    write(tmp_path, "metrics.json", {"r2": 0.8})
    spec = {"output": "metrics", "value": "/r2", "test": ">=", "threshold": {"param": "r2_min"}}
    check = one(judge(tmp_path, {"r2_min": 0.85}, c=spec))
    assert (check["status"], check["threshold"], check["threshold_param"]) == ("fail", 0.85, "r2_min")
    assert one(judge(tmp_path, {"r2_min": 0.5}, c=spec))["status"] == "pass"
    missing = one(judge(tmp_path, {}, c=spec))
    assert missing["status"] == "unknown"
    assert missing["reason"] == "the threshold is param `r2_min`, which has no value in this run"
    text = one(judge(tmp_path, {"r2_min": "high"}, c=spec))
    assert text["reason"] == "the threshold, param `r2_min`, is a string, not a number"


def test_a_pointer_with_a_param_is_held_for_every_item_and_reports_the_worst(tmp_path):
    write(tmp_path, "metrics.json", {"targets": {"hardness": {"r2": 0.97}, "yield/mpa": {"r2": 0.31}}})
    spec = {"output": "metrics", "value": "/targets/{target_properties}/r2", "test": ">=", "threshold": 0.5}
    check = one(judge(tmp_path, {"target_properties": ["hardness", "yield/mpa"]}, c=spec))
    assert (check["status"], check["value"]) == ("fail", 0.31)
    assert check["values"] == [{"at": "/targets/hardness/r2", "value": 0.97, "status": "pass"},
                               {"at": "/targets/yield~1mpa/r2", "value": 0.31, "status": "fail"}]
    passing = one(judge(tmp_path, {"target_properties": ["hardness"]}, c=spec))
    assert (passing["status"], passing["value"]) == ("pass", 0.97)
    absent = one(judge(tmp_path, {"target_properties": ["hardness", "density"]}, c=spec))
    assert absent["status"] == "unknown" and absent["value"] == 0.97
    assert absent["reason"] == "/targets/density/r2 names nothing in output `metrics`"


def test_a_missing_output_makes_its_check_unknown_and_says_so(tmp_path):
    found = judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0})
    assert found["status"] == "unknown"
    assert one(found)["reason"] == "output `metrics` was not written" and one(found)["value"] is None


def test_an_output_not_made_for_these_params_is_unknown_naming_its_when(tmp_path):
    write(tmp_path, "extra.json", {"x": 1})
    check = one(judge(tmp_path, {"make_extra": False}, c={"output": "extra", "value": "/x", "test": ">",
                                                          "threshold": 0}))
    assert check["reason"] == "output `extra` is not made for these params (its `when`)"


@pytest.mark.parametrize("value, why", [
    ("s3cret-token", "is a string, not a number"), (True, "is a boolean, not a number"),
    (None, "is null, not a number"), ([1], "is a list, not a number"), (10 ** 400, "is not a finite number"),
])
def test_a_value_that_is_not_a_finite_number_is_unknown_without_quoting_the_output(tmp_path, value, why):
    write(tmp_path, "metrics.json", {"x": value} if value != 10 ** 400 else '{"x": ' + "9" * 401 + "}")
    check = one(judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0}))
    assert check["status"] == "unknown" and check["reason"] == f"/x in output `metrics` {why}"
    assert "s3cret" not in json.dumps(check)


def test_table_aggregates_are_what_pandas_says_with_missing_cells_left_out(tmp_path):
    cells = ["1.5", "", "NA", "2.25", "nan", "-4", "1e3", "7", "N/A", "0.125"]
    path = write(tmp_path, "table.csv", "name,v\n" + "".join(f"r{i},{c}\n" for i, c in enumerate(cells)))
    column = pd.read_csv(path)["v"]
    expected = {"mean": column.mean(), "median": column.median(), "min": column.min(), "max": column.max(),
                "sum": column.sum(), "count": column.count(), "std": column.std()}
    for how, want in expected.items():
        check = one(judge(tmp_path, c={"output": "table", "value": {"column": "v", "aggregate": how},
                                       "test": ">", "threshold": -1e9}))
        assert check["status"] == "pass" and check["measure"] == f"{how}(v)"
        assert check["value"] == pytest.approx(float(want), rel=1e-12), how


def test_a_cell_that_is_not_a_number_makes_a_table_check_unknown_naming_the_row_not_the_cell(tmp_path):
    write(tmp_path, "table.csv", "v\n1\n2\npassword=hunter2\n")
    check = one(judge(tmp_path, c={"output": "table", "value": {"column": "v", "aggregate": "max"}, "test": ">",
                                   "threshold": 0}))
    assert check["reason"] == "row 3 of column `v` of output `table` is not a number"
    assert "hunter2" not in json.dumps(check)


def test_a_column_the_table_lacks_and_a_ragged_row_are_unknown(tmp_path):
    write(tmp_path, "table.csv", "a,b\n1,2\n3\n")
    lacking = one(judge(tmp_path, c={"output": "table", "value": {"column": "c", "aggregate": "sum"},
                                     "test": ">", "threshold": 0}))
    assert lacking["reason"] == "output `table` has no column `c`"
    ragged = one(judge(tmp_path, c={"output": "table", "value": {"column": "a", "aggregate": "sum"},
                                    "test": ">", "threshold": 0}))
    assert ragged["reason"] == "row 2 of output `table` has 1 fields, its header 2"


def test_aggregates_of_nothing_follow_pandas_count_and_sum_zero_the_rest_unknown():
    assert aggregate([], "count") == 0 and aggregate(["", "NA"], "sum") == 0
    with pytest.raises(Exception, match="has no numeric cells"):
        aggregate(["NaN"], "mean")
    with pytest.raises(Exception, match="fewer than 2 numeric cells"):
        aggregate(["1"], "std")


def test_a_json_output_over_the_bound_is_unknown_and_never_parsed(tmp_path):
    path = write(tmp_path, "metrics.json", "")
    with open(path, "wb") as fh:  # a valid document just over the bound: only its size decides
        fh.write(b'{"x": 1, "pad": "' + b"a" * output_files.MAX_JSON_BYTES + b'"}')
    check = one(judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0}))
    assert check["reason"] == "output `metrics` is larger than 16 MiB, more than a check reads"


def test_a_table_over_the_row_bound_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(output_files, "MAX_TABLE_ROWS", 100)
    write(tmp_path, "table.csv", "v\n" + "1\n" * 101)
    check = one(judge(tmp_path, c={"output": "table", "value": {"column": "v", "aggregate": "count"}, "test": ">",
                                   "threshold": 0}))
    assert check["reason"] == "output `table` has more than 100 rows, more than a check reads"


def test_a_deeply_nested_json_output_is_unknown_not_a_crash(tmp_path):
    write(tmp_path, "metrics.json", "[" * 200000 + "]" * 200000)
    check = one(judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0}))
    assert check["reason"] in ("output `metrics` is nested too deeply to read",
                               "/x names nothing in output `metrics`")


def test_a_fifo_output_is_refused_without_waiting_for_a_writer(tmp_path):
    (tmp_path / "results").mkdir()
    os.mkfifo(tmp_path / "results" / "metrics.json")
    done = threading.Event()
    found = {}

    def go():
        found["v"] = judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0})
        done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(10), "reading the verdict waited on a FIFO"
    assert one(found["v"])["reason"] == "output `metrics` is not a regular file (not read)"


def test_a_symbolic_link_output_is_not_followed(tmp_path):
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"x": 42}')
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "metrics.json").symlink_to(secret)
    check = one(judge(tmp_path, c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0}))
    assert check["reason"] == "output `metrics` is a symbolic link (not followed)"


def test_bytes_other_than_those_the_job_recorded_are_never_judged(tmp_path):
    path = write(tmp_path, "metrics.json", {"x": 0.9})
    recorded = hashlib.sha256(path.read_bytes()).hexdigest()
    spec = {"output": "metrics", "value": "/x", "test": ">", "threshold": 0.5}
    assert one(judge(tmp_path, sha256={"metrics": recorded}, c=spec))["status"] == "pass"
    write(tmp_path, "metrics.json", {"x": 0.1})  # rewritten after its job
    check = one(judge(tmp_path, sha256={"metrics": recorded}, c=spec))
    assert check["status"] == "unknown"
    assert check["reason"] == ("output `metrics` is not the file its job recorded (its sha256 differs): it "
                               "changed after the job")
    table = write(tmp_path, "table.csv", "v\n1\n")
    sha = hashlib.sha256(table.read_bytes()).hexdigest()
    table.write_text("v\n9\n")
    check = one(judge(tmp_path, sha256={"table": sha}, c={"output": "table", "value": {"column": "v",
                                                          "aggregate": "max"}, "test": ">", "threshold": 0}))
    assert check["status"] == "unknown" and "not the file its job recorded" in check["reason"]


def test_a_prefix_names_a_plan_steps_checks_and_outputs(tmp_path):
    write(tmp_path, "metrics.json", {"x": 1})
    files = {"bench.metrics": OutputFile(tmp_path / "results/metrics.json", "json")}
    found = verdict(manifest(c={"output": "metrics", "value": "/x", "test": ">", "threshold": 0}), {},
                    reader(files), prefix="bench.")
    assert (one(found)["name"], one(found)["output"], one(found)["status"]) == ("bench.c", "bench.metrics", "pass")


def test_the_overall_verdict_is_fail_over_unknown_over_pass():
    assert overall([{"status": "pass"}, {"status": "unknown"}, {"status": "fail"}]) == "fail"
    assert overall([{"status": "pass"}, {"status": "unknown"}]) == "unknown"
    assert overall([{"status": "pass"}, {"status": "pass"}]) == "pass"
    assert overall([]) == "unknown"  # nothing says what a good run looks like
