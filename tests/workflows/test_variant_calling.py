"""Tests for the variant-calling workflow: real bwa, samtools and bcftools on the synthetic genome.

workflows/variant-calling/test/data/make_data.py plants 56 SNPs (24 shared, 16
private per sample, het or hom) in a 50 kb reference and simulates 30x single-end
reads for two samples; the same bytes are the example data under data/examples/.
Two runs side by side: the test case standalone with one thread, and the
two-samples example through `snakegate run` in a throwaway registry (outputs under
runs/<run_id>/, two threads). Their calls.vcf must be byte-identical.
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from registry_copies import ROOT, clean_env, make_registry
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

WF = ROOT / "workflows" / "variant-calling"
TEST_DATA = WF / "test" / "data"
EXAMPLE_DATA = ROOT / "data" / "examples" / "variant-calling"
OUTPUTS = ["results/calls.vcf", "results/summary.json", "results/coverage.tsv", "results/depth.png"]
TOOLS = ("bwa", "samtools", "bcftools")

needs_tools = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                 reason="bwa, samtools and bcftools are needed (sudo apt-get install bwa samtools bcftools)")


def path_without_tools(folder: Path) -> str:
    """A PATH holding every executable of this one (as links in `folder`) except bwa, samtools and bcftools:
    the machine as it is, minus the workflow's tools (Snakemake itself still finds `which`, `bash`, ...)."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            target = folder / entry.name
            if entry.name in TOOLS or target.exists() or not os.access(entry.path, os.X_OK):
                continue
            target.symlink_to(entry.path)
    return str(folder)


def planted() -> dict[str, set[tuple[int, str, str]]]:
    """{sample: {(pos, alt, genotype)}} of the planted SNPs each sample carries."""
    lines = (TEST_DATA / "planted.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    carried = {s: set() for s in header[4:]}
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        for s in carried:
            if row[s] != "0/0":
                carried[s].add((int(row["pos"]), row["alt"], row[s]))
    return carried


def called(vcf: Path) -> dict[str, set[tuple[int, str, str]]]:
    """{sample: {(pos, alt, genotype)}} of non-reference genotypes, read with bcftools query."""
    samples = subprocess.run(["bcftools", "query", "-l", str(vcf)], capture_output=True, text=True,
                             check=True).stdout.split()
    rows = subprocess.run(["bcftools", "query", "-f", "%POS\t%ALT[\t%GT]\n", str(vcf)], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    out = {s: set() for s in samples}
    for row in rows:
        pos, alt, *gts = row.split("\t")
        for s, gt in zip(samples, gts):
            if gt not in ("0/0", "./."):
                out[s].add((int(pos), alt, gt))
    return out


def params_of(run_config: Path, **overrides) -> dict:
    reg = Registry.load(ROOT)
    data = yaml.safe_load(run_config.read_text())
    data["params"] |= overrides
    result = gate(reg, data, load_settings(ROOT).with_data_roots(WF / "test"), check_dag=False)
    assert result.ok, result.errors
    return result.resolved_params


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The test case standalone (1 thread) and the example via `snakegate run` (2 threads), side by side."""
    base = tmp_path_factory.mktemp("variant_calling")
    standalone = base / "standalone run"  # a space in the path: every shell argument must be quoted
    standalone.mkdir()
    (standalone / "params.yaml").write_text(yaml.safe_dump(params_of(WF / "test" / "basic" / "config.yaml")))
    reg = make_registry(base / "registry")
    shutil.copytree(WF, reg / "workflows" / "variant-calling", ignore=shutil.ignore_patterns("test", "__pycache__"))
    shutil.copytree(EXAMPLE_DATA, reg / "data" / "examples" / "variant-calling")
    config = yaml.safe_load((WF / "examples" / "two-samples.yaml").read_text())
    config["params"]["threads"] = 2
    (reg / "run.yaml").write_text(yaml.safe_dump(config))
    inputs_before = sorted(p.name for p in (reg / "data" / "examples" / "variant-calling").iterdir())

    with open(standalone / "snakemake.out", "w") as out:
        procs = [subprocess.Popen([sys.executable, "-m", "snakemake", "-s", str(WF / "Snakefile"),
                                   "--configfile", str(standalone / "params.yaml"), "-d", str(standalone),
                                   "--cores", "1"], stdout=out, stderr=subprocess.STDOUT)]
        procs.append(subprocess.Popen([sys.executable, "-m", "snakegate.cli", "run", "run.yaml", "--cores", "2"],
                                      cwd=reg, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
        registry_out = procs[1].communicate(timeout=600)[0]
        procs[0].wait(timeout=600)
    assert procs[0].returncode == 0, (standalone / "snakemake.out").read_text()[-3000:]
    assert procs[1].returncode == 0, registry_out[-3000:]
    run_dirs = [p for p in (reg / "runs").iterdir() if p.is_dir()]
    assert len(run_dirs) == 1
    return {"standalone": standalone, "registry_run": run_dirs[0], "registry": reg, "inputs_before": inputs_before}


@needs_tools
def test_recall_and_precision_against_the_planted_snps_are_at_least_0_95(runs):
    truth, calls = planted(), called(runs["standalone"] / "results" / "calls.vcf")
    assert set(calls) == {"alpha", "beta"}
    for sample in truth:
        true_sites = {(p, a) for p, a, _ in truth[sample]}
        call_sites = {(p, a) for p, a, _ in calls[sample]}
        hits = len(true_sites & call_sites)
        recall, precision = hits / len(true_sites), hits / len(call_sites)
        print(f"{sample}: {len(true_sites)} planted, {len(call_sites)} called, recall {recall:.3f}, "
              f"precision {precision:.3f}")
        assert recall >= 0.95 and precision >= 0.95, (sample, recall, precision)


@needs_tools
def test_called_genotypes_match_the_planted_het_and_hom_genotypes(runs):
    truth, calls = planted(), called(runs["standalone"] / "results" / "calls.vcf")
    for sample in truth:
        agree = len(truth[sample] & calls[sample])
        assert agree / len(truth[sample]) >= 0.95, (sample, truth[sample] ^ calls[sample])


@needs_tools
def test_calls_vcf_is_byte_identical_across_run_folders_and_thread_counts(runs):
    for name in ("reference.fa", "alpha.fq.gz", "beta.fq.gz"):  # the premise: the same input bytes
        assert filecmp.cmp(TEST_DATA / name, EXAMPLE_DATA / name, shallow=False), name
    for rel in OUTPUTS:
        assert filecmp.cmp(runs["standalone"] / rel, runs["registry_run"] / rel, shallow=False), rel


@needs_tools
def test_expected_outputs_match_a_fresh_run(runs):
    for rel in OUTPUTS:
        expected = WF / "test" / "basic" / "expected" / rel
        assert filecmp.cmp(runs["standalone"] / rel, expected, shallow=False), rel


@needs_tools
def test_vcf_header_names_no_path_version_or_command(runs):
    header = [line for line in (runs["registry_run"] / "results" / "calls.vcf").read_text().splitlines()
              if line.startswith("##")]
    assert "##reference=file://reference.fa" in header
    assert not [line for line in header if "/" in line.replace("file://", "") and not line.startswith("##INFO")
                and not line.startswith("##FORMAT")]
    assert not [line for line in header if "Version" in line.split("=")[0] or "Command" in line]


@needs_tools
def test_bams_carry_no_program_lines_and_a_read_group_per_sample(runs):
    for sample in ("alpha", "beta"):
        bam = runs["registry_run"] / "results" / "alignments" / f"{sample}.bam"
        header = subprocess.run(["samtools", "view", "--no-PG", "-H", str(bam)], capture_output=True, text=True,
                                check=True).stdout.splitlines()
        assert not [h for h in header if h.startswith("@PG")]
        assert f"@RG\tID:{sample}\tSM:{sample}" in header


@needs_tools
def test_reference_is_indexed_inside_the_run_folder_never_next_to_the_input(runs):
    inputs = runs["registry"] / "data" / "examples" / "variant-calling"
    assert sorted(p.name for p in inputs.iterdir()) == runs["inputs_before"]
    indexed = runs["registry_run"] / "results" / "reference"
    assert {p.name for p in indexed.iterdir()} >= {"reference.fa", "reference.fa.fai", "reference.fa.bwt",
                                                   "reference.fa.sa"}
    assert not (indexed / "reference.fa").is_symlink()


@needs_tools
def test_summary_counts_each_samples_planted_variants_and_depth(runs):
    summary = json.loads((runs["standalone"] / "results" / "summary.json").read_text())
    truth = planted()
    assert summary["sample_order"] == ["alpha", "beta"]
    assert summary["reference"] == {"contigs": 1, "length_bp": 50000}
    assert summary["calls"]["records"] == 56 and summary["calls"]["indels"] == 0
    for sample, s in summary["samples"].items():
        hom = sum(1 for *_, gt in truth[sample] if gt == "1/1")
        assert (s["variant_sites"], s["homozygous_alt"], s["heterozygous"]) == (
            len(truth[sample]), hom, len(truth[sample]) - hom)
        assert s["transitions"] + s["transversions"] == s["snvs"] == len(truth[sample])
        assert s["ts_tv"] == pytest.approx(s["transitions"] / s["transversions"], rel=1e-5)
        assert 28 <= s["mean_depth"] <= 32


@needs_tools
def test_run_record_lists_every_declared_output(runs):
    record = json.loads((runs["registry_run"] / "run.json").read_text())
    assert record["status"] == "succeeded"
    assert {o["name"] for o in record["outputs"] if o["exists"]} == {"calls", "summary", "coverage", "depth_plot"}


# ---- the gate, without running anything -------------------------------------------------------

def example_invocation(**overrides) -> dict:
    data = yaml.safe_load((WF / "examples" / "two-samples.yaml").read_text())
    data["params"] |= overrides
    return data


def gate_errors(invocation: dict, **kw) -> list:
    result = gate(Registry.load(ROOT), invocation, load_settings(ROOT), **kw)
    return [] if result.ok else result.errors


def test_duplicate_sample_names_and_shared_reads_are_refused_by_the_preflight():
    reads = "data/examples/variant-calling/alpha.fq.gz"
    errors = gate_errors(example_invocation(samples=[{"name": "alpha", "reads": reads},
                                                     {"name": "alpha", "reads": reads}]), check_tools=False)
    assert {(e.path, e.code) for e in errors} == {("params.samples[1].name", "preflight"),
                                                  ("params.samples[1].reads", "preflight")}
    assert all("samples[0]" in e.message for e in errors)


@pytest.mark.parametrize("name", ["my sample", "../escape", "-rf", ".hidden", "a/b", "x" * 65, ""])
def test_unsafe_sample_names_are_refused(name):
    errors = gate_errors(example_invocation(samples=[{"name": name, "reads": "data/examples/variant-calling/alpha.fq.gz"}]),
                         check_tools=False)
    assert [(e.path, e.code) for e in errors] == [("params.samples[0].name", "pattern")]


def test_reads_that_are_not_fastq_are_refused_naming_the_sample():
    errors = gate_errors(example_invocation(samples=[{"name": "alpha", "reads": "data/examples/variant-calling/reference.fa"}]),
                         check_tools=False)
    assert [(e.path, e.code) for e in errors] == [("params.samples[0].reads", "format")]


def test_missing_tools_are_refused_with_their_install_commands(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", path_without_tools(tmp_path / "bin"))
    errors = gate_errors(example_invocation())
    assert [(e.path, e.code) for e in errors] == [(f"tools.{t}", "tool_missing") for t in TOOLS]
    assert all(f"sudo apt-get install {t}" in e.hint for t, e in zip(TOOLS, errors))


def test_snakegate_test_without_the_tools_skips_the_workflow_and_fails_saying_what_to_install(tmp_path):
    env = clean_env(PATH=path_without_tools(tmp_path / "bin"))
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "test", "variant-calling"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a skipped case proved nothing
    assert "skip  variant-calling/basic" in proc.stdout and "sudo apt-get install bwa" in proc.stdout
    assert "1 skipped" in proc.stdout and "1 test case(s) could not run here" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_snakegate_check_warns_without_the_tools_and_passes(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "check", "variant-calling", "--json"],
                          cwd=ROOT, env=clean_env(PATH=path_without_tools(tmp_path / "bin")), capture_output=True,
                          text=True, timeout=300)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report
    assert not [f for f in report["findings"] if f["severity"] == "error"]
    warned = {f["message"].split("`")[1]: f["hint"] for f in report["findings"] if f["code"] == "tool_missing"}
    assert set(warned) == set(TOOLS) and all(f"sudo apt-get install {t}" in warned[t] for t in TOOLS)
