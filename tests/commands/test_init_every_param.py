"""`snakegate init WORKFLOW` writes every param (issue 29 §3): the required ones as values, each optional one
commented out with its default (or none) and its whole description, every line within 80 columns; the
template passes the gate as written, and uncommenting an optional line keeps it passing.

The CLI in-process on a copy of the curated classifier-benchmark and tabular-profile.
"""

from __future__ import annotations

import json

import pytest

from registry_copies import copy_registry
from snakegate.config.write import dump_config


@pytest.fixture
def registry(tmp_path, monkeypatch):
    root = copy_registry(tmp_path / "registry", workflows=("classifier-benchmark", "tabular-profile"))
    monkeypatch.chdir(root)
    return root


def test_init_writes_every_param_with_optional_ones_commented_out_with_their_default(cli, registry):
    code, out, err = cli("init", "classifier-benchmark")
    assert code == 0, err
    schema = json.loads((registry / "workflows/classifier-benchmark/schema.json").read_text())
    lines = out.splitlines()
    comments = " ".join(line.strip(" #") for line in lines if line.lstrip().startswith("#"))
    for name, sub in schema["properties"].items():
        if name in schema["required"]:
            assert any(line.startswith(f"  {name}: ") for line in lines), name
            continue
        value = dump_config({name: sub["default"]}).strip() if "default" in sub else f"{name}:"
        assert f"  # {value}" in lines, name  # commented out, ready to uncomment
        about = f"Optional, default {value.split(': ', 1)[1]}." if "default" in sub else "Optional, no default."
        assert f"{about} {' '.join(sub['description'].split())}" in comments, name  # the description whole
    assert max(len(line) for line in lines) <= 80


def test_init_template_passes_the_gate_as_written_and_with_an_option_uncommented(cli, registry):
    code, _, err = cli("init", "tabular-profile", "-o", "t.yaml")
    assert code == 0, err
    code, out, err = cli("validate", "t.yaml")
    assert code == 0, out + err
    text = (registry / "t.yaml").read_text()
    assert "  # missing_strategy: remove\n" in text
    (registry / "t.yaml").write_text(text.replace("  # missing_strategy: remove\n", "  missing_strategy: fill_median\n"))
    code, out, err = cli("validate", "t.yaml")
    assert code == 0, out + err
