"""`snakegate runs`, `show-run` and `report` list a damaged run as damaged, with the reason, and never hang, crash
or read a record unbounded: a `started` that is no time, run.json / prov.json / invocation.json that is a FIFO,
a symbolic link to /dev/zero, or a sparse gigabyte (tests/damaged_runs.py). Real `snakegate` processes, each with
a timeout, over a registry holding one real run and one damaged copy of it.
"""

from __future__ import annotations

import json

import pytest

from damaged_runs import DAMAGES, REASON, TIMEOUT, damaged_copy, real_run, remove
from registry_copies import make_registry, snakegate


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return real_run(make_registry(tmp_path_factory.mktemp("damaged") / "registry"))


@pytest.fixture(params=list(DAMAGES))
def damaged(request, good):
    folder = damaged_copy(good, request.param)
    yield folder
    remove(folder)


def test_runs_lists_a_damaged_run_as_unreadable_with_the_reason_and_the_others_as_they_are(good, damaged):
    root = good.parents[1]
    proc = snakegate(root, "runs", timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert f"{good.name}" in proc.stdout and "succeeded" in proc.stdout
    rows = json.loads(snakegate(root, "runs", "--json", timeout=TIMEOUT).stdout)["runs"]
    by_id = {r["run_id"]: r for r in rows}
    assert by_id[good.name]["status"] == "succeeded"
    assert by_id[damaged.name]["status"] == "unreadable", by_id[damaged.name]
    assert REASON[damaged.name] in by_id[damaged.name]["note"], by_id[damaged.name]
    only = json.loads(snakegate(root, "runs", "--json", "--status", "unreadable", timeout=TIMEOUT).stdout)["runs"]
    assert [r["run_id"] for r in only] == [damaged.name]


def test_show_run_of_a_damaged_run_says_why_and_the_others_still_show(good, damaged):
    root = good.parents[1]
    proc = snakegate(root, "show-run", damaged.name, timeout=TIMEOUT)
    assert proc.returncode == 1 and REASON[damaged.name] in proc.stderr, proc.stdout + proc.stderr
    assert "the other runs are not affected" in proc.stderr
    assert snakegate(root, "show-run", good.name, timeout=TIMEOUT).returncode == 0


def test_report_of_a_damaged_run_refuses_or_notes_it_and_never_waits(good, damaged):
    root = good.parents[1]
    proc = snakegate(root, "report", damaged.name, "-o", str(root / f"{damaged.name}.html"), timeout=TIMEOUT)
    if DAMAGES[damaged.name][0] == "run.json":
        assert proc.returncode == 1 and REASON[damaged.name] in proc.stderr, proc.stdout + proc.stderr
    else:  # the run's own record is whole: the page is written and says what it could not read
        assert proc.returncode == 0, proc.stderr
        assert REASON[damaged.name] in (root / f"{damaged.name}.html").read_text()
