"""A real cohort fits the gate (issue 30: a 1,000-sample variant-calling config was refused at 200), and a refusal
of a long value quotes a few items of it, never the whole list (it was echoed on one 51 KB line)."""

from __future__ import annotations

import gzip
import shutil

import yaml

from registry_copies import REPO, make_registry, snakegate


def _cohort(tmp_path, n: int):
    root = make_registry(tmp_path / "registry")
    shutil.copytree(REPO / "workflows" / "variant-calling", root / "workflows" / "variant-calling",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake", "test"))
    data = root / "data" / "cohort"
    data.mkdir(parents=True)
    (data / "ref.fa").write_text(">chr1\n" + "ACGT" * 50 + "\n")
    read = gzip.compress(b"@r1\nACGTACGTAC\n+\nIIIIIIIIII\n", mtime=0)
    samples = []
    for i in range(n):
        (data / f"s{i:04d}.fq.gz").write_bytes(read)
        samples.append({"name": f"s{i:04d}", "reads": f"data/cohort/s{i:04d}.fq.gz"})
    (root / "cohort.yaml").write_text(yaml.safe_dump({"workflow": "variant-calling", "params": {
        "reference": "data/cohort/ref.fa", "samples": samples}}))
    return root


def test_a_thousand_sample_cohort_passes_the_gate(tmp_path):
    root = _cohort(tmp_path, 1000)
    proc = snakegate(root, "validate", "cohort.yaml", timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ok:" in proc.stdout


def test_a_refused_long_list_is_quoted_by_its_size_and_first_items_only(tmp_path):
    root = _cohort(tmp_path, 5001)
    proc = snakegate(root, "validate", "cohort.yaml", timeout=900)
    assert proc.returncode == 1
    said = " ".join((proc.stdout + proc.stderr).split())  # refusals wrap at 80 columns
    assert "must be a list of at most 5000 item(s)" in said
    assert "a list of 5001 item(s): [{'name': 's0000'" in said
    assert "s0100" not in said
    assert max(len(line) for line in (proc.stdout + proc.stderr).splitlines()) < 400
