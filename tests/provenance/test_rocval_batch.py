"""validate_many: several crates judged by one roc-validator process, each on its own.

A crate missing what the profile REQUIRES, between two that pass, gets its own issue, and the crates around it
get none of it: nothing of one crate's judgement carries over to the next in the shared process. The crates
are exports of the session's succeeded run (prov_runs.py); roc-validator runs from its own environment.
"""

from __future__ import annotations

import json
import shutil

import pytest
from snakegate.provenance.rocrate import validate as rocval

from registry_copies import snakegate


def test_a_broken_crate_between_two_good_ones_is_the_only_one_with_a_required_issue(
        succeeded_run, prov_registry, tmp_path, roc_validator):
    good = tmp_path / "good"
    proc = snakegate(prov_registry, "export", succeeded_run.name, "--ro-crate", good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken"
    shutil.copytree(good, broken)
    metadata = broken / "ro-crate-metadata.json"
    crate = json.loads(metadata.read_text())
    root = next(e for e in crate["@graph"] if e["@id"] == "./")
    del root["datePublished"]  # RO-Crate 1.1: the root data entity MUST have one
    metadata.write_text(json.dumps(crate))

    first, middle, last = rocval.validate_many([good, broken, good], severity="recommended")
    assert [i for i in first if i.severity == "REQUIRED"] == []
    assert sorted(map(str, first)) == sorted(map(str, last))
    required = [str(i) for i in middle if i.severity == "REQUIRED"]
    assert required and any("datePublished" in text for text in required), required


def test_no_crates_is_no_judgement_and_starts_nothing(roc_validator):
    assert rocval.validate_many([]) == []


def test_a_folder_without_metadata_fails_required_and_a_missing_path_is_named_without_a_traceback(
        tmp_path, roc_validator):
    (tmp_path / "empty").mkdir()
    (issues,) = rocval.validate_many([tmp_path / "empty"])
    assert any(i.severity == "REQUIRED" and "ro-crate-metadata.json" in i.message for i in issues), issues
    with pytest.raises(rocval.ValidatorFailed) as failed:
        rocval.validate_many([tmp_path / "empty", tmp_path / "gone"])
    assert str(tmp_path / "gone") in str(failed.value) and "Traceback" not in str(failed.value)
