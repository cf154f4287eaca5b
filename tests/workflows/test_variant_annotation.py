"""Tests for the variant-annotation workflow: real bcftools and Snakemake on variant-calling's own calls.

data/examples/variant-annotation/calls.vcf is variant-calling's output for the 56 SNPs planted in the
synthetic 50 kb genome (data/examples/variant-calling/planted.tsv); features.gff3 places genes, exons,
CDS, a repeat, a pseudogene, an enhancer and a TF binding site around them. The truth here is computed
from planted.tsv and the GFF3 by brute force (every SNP against every feature), not by the workflow's
sweep. Two runs side by side: the basic test case standalone, and the demo example through `snakegate
run` in a throwaway registry; their outputs must be byte-identical. The gate tests run nothing: contig
namings that share no name are refused by the preflight, naming both files' contigs.
"""
import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from registry_copies import ROOT, clean_env, make_registry
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from test_variant_calling import path_without_tools

WF = ROOT / "workflows" / "variant-annotation"
TEST_DATA = WF / "test" / "data"
EXAMPLE_DATA = ROOT / "data" / "examples" / "variant-annotation"
PLANTED = ROOT / "data" / "examples" / "variant-calling" / "planted.tsv"
OUTPUTS = ["results/annotated.vcf", "results/variants.tsv", "results/summary.json"]

needs_bcftools = pytest.mark.skipif(shutil.which("bcftools") is None,
                                    reason="bcftools is needed (sudo apt-get install bcftools)")


def features_of(gff3: Path) -> list[dict]:
    """Every feature line of a GFF3 as {contig, type, start, end, name} (Name, else ID, else contig:start-end)."""
    out = []
    for line in gff3.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        contig, _, ftype, start, end, *_, attrs = line.split("\t")
        attr = dict(a.split("=", 1) for a in attrs.split(";"))
        out.append({"contig": contig, "type": ftype, "start": int(start), "end": int(end),
                    "name": attr.get("Name") or attr.get("ID") or f"{contig}:{start}-{end}"})
    return out


def truth() -> dict[int, set[tuple[str, str]]]:
    """{planted SNP position: {(feature name, type)}} by brute force; an empty set outside every feature."""
    rows = PLANTED.read_text().splitlines()[1:]
    positions = [int(r.split("\t")[1]) for r in rows]
    features = features_of(EXAMPLE_DATA / "features.gff3")
    return {p: {(f["name"], f["type"]) for f in features if f["start"] <= p <= f["end"]} for p in positions}


def annotations(vcf: Path) -> dict[int, set[tuple[str, str]]]:
    """{POS: {(FEATURE name, FEATURE_TYPE)}} of an annotated VCF, read with bcftools query."""
    rows = subprocess.run(["bcftools", "query", "-f", "%POS\t%INFO/FEATURE\t%INFO/FEATURE_TYPE\n", str(vcf)],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    out = {}
    for row in rows:
        pos, names, types = row.split("\t")
        out[int(pos)] = set() if names == "." else set(zip(names.split(","), types.split(",")))
    return out


def params_of(run_config: Path) -> dict:
    data = yaml.safe_load(run_config.read_text())
    result = gate(Registry.load(ROOT), data, load_settings(ROOT).with_data_roots(WF / "test"), check_dag=False)
    assert result.ok, result.errors
    return result.resolved_params


def annotation_registry(root: Path) -> Path:
    """A throwaway registry holding variant-annotation (without its tests) and its demo data."""
    reg = make_registry(root)
    shutil.copytree(WF, reg / "workflows" / "variant-annotation", ignore=shutil.ignore_patterns("test", "__pycache__"))
    shutil.copytree(EXAMPLE_DATA, reg / "data" / "examples" / "variant-annotation")
    return reg


def snakegate_cli(reg: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *args], cwd=reg, env=clean_env(**env),
                          capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The basic test case standalone and the demo example via `snakegate run`, side by side."""
    base = tmp_path_factory.mktemp("variant_annotation")
    standalone = base / "standalone run"  # a space in the path: every shell argument must be quoted
    standalone.mkdir()
    (standalone / "params.yaml").write_text(yaml.safe_dump(params_of(WF / "test" / "basic" / "config.yaml")))
    reg = annotation_registry(base / "registry")
    shutil.copy(WF / "examples" / "demo.yaml", reg / "run.yaml")
    inputs_before = sorted(p.name for p in (reg / "data" / "examples" / "variant-annotation").iterdir())

    with open(standalone / "snakemake.out", "w") as out:
        plain = subprocess.Popen([sys.executable, "-m", "snakemake", "-s", str(WF / "Snakefile"),
                                  "--configfile", str(standalone / "params.yaml"), "-d", str(standalone),
                                  "--cores", "1"], stdout=out, stderr=subprocess.STDOUT)
        registry = snakegate_cli(reg, "run", "run.yaml", "--cores", "1")
        plain.wait(timeout=600)
    assert plain.returncode == 0, (standalone / "snakemake.out").read_text()[-3000:]
    assert registry.returncode == 0, (registry.stdout + registry.stderr)[-3000:]
    (run_dir,) = [p for p in (reg / "runs").iterdir() if p.is_dir()]
    return {"standalone": standalone, "registry_run": run_dir, "registry": reg, "inputs_before": inputs_before}


@needs_bcftools
def test_planted_snps_inside_features_are_annotated_with_exactly_those_features(runs):
    expected, got = truth(), annotations(runs["standalone"] / "results" / "annotated.vcf")
    inside = {p: f for p, f in expected.items() if f}
    assert len(inside) == 18
    for pos, features in inside.items():
        assert got[pos] == features, pos
    assert got[1680] == {("synA", "gene"), ("synA-201", "mRNA"), ("exon:synA-201.1", "exon"),
                         ("CDS:synA-p1", "CDS")}
    assert got[28473] == {("synth1:28401-28700", "repeat_region")}  # neither Name nor ID


@needs_bcftools
def test_planted_snps_outside_every_feature_carry_no_annotation(runs):
    expected, got = truth(), annotations(runs["standalone"] / "results" / "annotated.vcf")
    outside = sorted(p for p, f in expected.items() if not f)
    assert len(outside) == 38 and set(got) == set(expected)
    assert [p for p in outside if got[p]] == []


@needs_bcftools
def test_a_snp_on_a_features_first_or_last_base_is_inside_and_one_base_beyond_is_not(runs):
    got = annotations(runs["standalone"] / "results" / "annotated.vcf")
    assert got[41426] == got[41569] == {("enh1", "enhancer")}  # the enhancer spans exactly 41426-41569
    assert got[45818] == got[46721] == set()  # the TF binding site spans 45819-46720


@needs_bcftools
def test_table_has_one_row_per_variant_in_vcf_order_with_the_outermost_feature_first(runs):
    lines = (runs["standalone"] / "results" / "variants.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["chrom", "pos", "ref", "alt", "feature", "feature_type"]
    rows = [line.split("\t") for line in lines[1:]]
    planted = [line.split("\t")[:4] for line in PLANTED.read_text().splitlines()[1:]]
    assert [r[:4] for r in rows] == planted
    by_pos = {int(r[1]): r for r in rows}
    assert by_pos[9948][4:] == ["synB,synB-201,exon:synB-201.3,CDS:synB-p1", "gene,mRNA,exon,CDS"]
    assert by_pos[841][4:] == ["", ""]


@needs_bcftools
def test_summary_counts_variants_per_feature_type(runs):
    summary = json.loads((runs["standalone"] / "results" / "summary.json").read_text())
    expected = truth()
    assert (summary["variants"], summary["in_features"], summary["outside_features"]) == (56, 18, 38)
    assert summary["in_features_fraction"] == pytest.approx(18 / 56, rel=1e-5)
    types = {t for features in expected.values() for _, t in features} | {"TF_binding_site"}
    assert set(summary["by_feature_type"]) == types
    for ftype, counts in summary["by_feature_type"].items():
        assert counts["variants"] == sum(1 for f in expected.values() if ftype in {t for _, t in f}), ftype
    assert summary["by_feature_type"]["CDS"]["features"] == 2  # a CDS over several lines is one feature
    assert summary["contigs_without_features"] == [] and summary["feature_types_not_found"] == []


@needs_bcftools
def test_annotated_vcf_keeps_every_input_line_but_info_and_bcftools_reads_it(runs):
    source = (EXAMPLE_DATA / "calls.vcf").read_text().splitlines()
    annotated = (runs["registry_run"] / "results" / "annotated.vcf").read_text().splitlines()
    added = [line for line in annotated if line not in source]
    assert [line.split(",")[0] for line in added if line.startswith("##")] == ["##INFO=<ID=FEATURE",
                                                                              "##INFO=<ID=FEATURE_TYPE"]
    records_in = [line.split("\t") for line in source if not line.startswith("#")]
    records_out = [line.split("\t") for line in annotated if not line.startswith("#")]
    assert [r[:7] + r[8:] for r in records_out] == [r[:7] + r[8:] for r in records_in]
    assert all(out[7].startswith(inp[7]) for inp, out in zip(records_in, records_out))
    view = subprocess.run(["bcftools", "view", "-H", str(runs["registry_run"] / "results" / "annotated.vcf")],
                          capture_output=True, text=True)
    assert view.returncode == 0 and view.stderr == "" and len(view.stdout.splitlines()) == 56


@needs_bcftools
def test_outputs_are_byte_identical_across_run_folders_and_match_the_expected_files(runs):
    for name in ("calls.vcf", "features.gff3"):  # the premise: the test case reads the demo's bytes
        assert filecmp.cmp(TEST_DATA / name, EXAMPLE_DATA / name, shallow=False), name
    for rel in OUTPUTS:
        assert filecmp.cmp(runs["standalone"] / rel, runs["registry_run"] / rel, shallow=False), rel
        assert filecmp.cmp(runs["standalone"] / rel, WF / "test" / "basic" / "expected" / rel, shallow=False), rel


@needs_bcftools
def test_nothing_is_written_beside_the_inputs_and_the_record_lists_every_output(runs):
    inputs = runs["registry"] / "data" / "examples" / "variant-annotation"
    assert sorted(p.name for p in inputs.iterdir()) == runs["inputs_before"]
    record = json.loads((runs["registry_run"] / "run.json").read_text())
    assert record["status"] == "succeeded"
    assert {o["name"] for o in record["outputs"] if o["exists"]} == {"annotated", "variants", "summary"}


@needs_bcftools
def test_variant_calling_output_is_annotated_as_it_comes(runs):
    """The demo VCF is variant-calling's calls as its test case expects them: the chain's real edge."""
    calls = ROOT / "workflows" / "variant-calling" / "test" / "basic" / "expected" / "results" / "calls.vcf"
    assert filecmp.cmp(calls, EXAMPLE_DATA / "calls.vcf", shallow=False)
    manifests = [yaml.safe_load((ROOT / "workflows" / w / "workflow.yaml").read_text())
                 for w in ("variant-calling", "variant-annotation")]
    schema = json.loads((WF / "schema.json").read_text())
    assert manifests[0]["outputs"]["calls"]["type"] == schema["properties"]["vcf"]["x-artifact"] == "vcf"


# ---- the gate, without running anything -------------------------------------------------------

def rename_contigs(text: str, old: str, new: str) -> str:
    """The file with contig `old` called `new` in its declarations and records."""
    lines = []
    for line in text.splitlines():
        if line.startswith(f"##contig=<ID={old},"):
            line = line.replace(f"ID={old},", f"ID={new},")
        elif line.startswith(f"##sequence-region {old} "):
            line = line.replace(f" {old} ", f" {new} ")
        elif line.startswith(f"{old}\t"):
            line = new + line[len(old):]
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def gate_registry(tmp_path_factory):
    """A registry with the demo data and renamed copies: chr-prefixed VCF and features, features of another genome."""
    reg = annotation_registry(tmp_path_factory.mktemp("annotation_gate") / "registry")
    data = reg / "data" / "examples" / "variant-annotation"
    vcf, gff3 = (data / "calls.vcf").read_text(), (data / "features.gff3").read_text()
    (data / "chr-calls.vcf").write_text(rename_contigs(vcf, "synth1", "chrsynth1"))
    (data / "chr-features.gff3").write_text(rename_contigs(gff3, "synth1", "chrsynth1"))
    (data / "other-genome.gff3").write_text(rename_contigs(gff3, "synth1", "scaffold_7"))
    (data / "genes.gtf").write_text('synth1\tsynthetic\tgene\t1501\t4600\t.\t+\t.\tgene_id "synA";\n')
    return reg


def demo_invocation(**params) -> dict:
    data = yaml.safe_load((WF / "examples" / "demo.yaml").read_text())
    data["params"] |= {k: f"data/examples/variant-annotation/{v}" for k, v in params.items()}
    return data


def gate_errors(reg: Path, invocation: dict, **kw) -> list:
    result = gate(Registry.load(reg), invocation, load_settings(reg), **kw)
    return [] if result.ok else result.errors


def test_the_demo_passes_the_gate(gate_registry):
    assert gate_errors(gate_registry, demo_invocation(), check_tools=False) == []


@pytest.mark.parametrize("vcf, features, vcf_names, feature_names, hint", [
    ("calls.vcf", "chr-features.gff3", "`synth1`", "`chrsynth1`", "only the `chr` prefix differs: the feature file"),
    ("chr-calls.vcf", "features.gff3", "`chrsynth1`", "`synth1`", "only the `chr` prefix differs: the VCF"),
    ("calls.vcf", "other-genome.gff3", "`synth1`", "`scaffold_7`", "give the feature file of the genome"),
])
def test_contig_namings_with_no_name_in_common_are_refused_by_the_preflight_naming_both(
        gate_registry, vcf, features, vcf_names, feature_names, hint):
    errors = gate_errors(gate_registry, demo_invocation(vcf=vcf, features=features), check_tools=False)
    assert [(e.path, e.code) for e in errors] == [("params.features", "preflight")]
    message = errors[0].message
    assert f"`vcf` (data/examples/variant-annotation/{vcf}) names its contigs {vcf_names}" in message
    assert f"`features` (data/examples/variant-annotation/{features}) names {feature_names}" in message
    assert hint in errors[0].hint


def test_a_naming_mismatch_is_refused_by_snakegate_run_before_any_job(gate_registry):
    (gate_registry / "mismatch.yaml").write_text(yaml.safe_dump(demo_invocation(features="chr-features.gff3")))
    proc = snakegate_cli(gate_registry, "run", "mismatch.yaml", "--cores", "1")
    assert proc.returncode != 0
    assert "preflight" in proc.stdout + proc.stderr and "`chrsynth1`" in proc.stdout + proc.stderr
    assert not list(gate_registry.glob("runs/*/results/*"))


def test_a_gtf_given_as_features_is_refused_as_not_gff3(gate_registry):
    errors = gate_errors(gate_registry, demo_invocation(features="genes.gtf"), check_tools=False)
    assert [(e.path, e.code) for e in errors] == [("params.features", "format")]
    assert "##gff-version 3" in errors[0].message


def test_missing_bcftools_is_refused_with_its_install_command(gate_registry, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", path_without_tools(tmp_path / "bin"))
    errors = gate_errors(gate_registry, demo_invocation())
    assert [(e.path, e.code) for e in errors] == [("tools.bcftools", "tool_missing")]
    assert "sudo apt-get install bcftools" in errors[0].hint


def test_snakegate_test_without_bcftools_skips_the_workflow_and_fails_saying_what_to_install(tmp_path):
    proc = snakegate_cli(ROOT, "test", "variant-annotation", PATH=path_without_tools(tmp_path / "bin"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # skipped cases proved nothing
    assert "skip  variant-annotation/basic" in proc.stdout and "sudo apt-get install bcftools" in proc.stdout
    cases = len(list((ROOT / "workflows/variant-annotation/test").glob("*/config.yaml")))
    assert f"{cases} test case(s): 0 passed, 0 failed, {cases} skipped" in proc.stdout  # every case, none run
    assert f"{cases} test case(s) could not run here" in proc.stdout


@needs_bcftools
def test_a_large_feature_file_the_gate_cannot_read_whole_runs_and_the_summary_names_the_unmatched_contig(tmp_path):
    """Over 64 KiB and without ##sequence-region, the gate cannot prove the features' naming: no refusal
    on a guess; the run completes and the summary says which VCF contig found no feature."""
    reg = annotation_registry(tmp_path / "registry")
    gff3 = (reg / "data" / "examples" / "variant-annotation" / "features.gff3").read_text()
    records = [line for line in rename_contigs(gff3, "synth1", "chrsynth1").splitlines() if not line.startswith("#")]
    big = reg / "data" / "examples" / "variant-annotation" / "big.gff3"
    big.write_text("##gff-version 3\n" + "\n".join(records * 400) + "\n")
    assert big.stat().st_size > 64 * 1024
    (reg / "run.yaml").write_text(yaml.safe_dump(demo_invocation(features="big.gff3")))
    proc = snakegate_cli(reg, "run", "run.yaml", "--cores", "1")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    (run_dir,) = [p for p in (reg / "runs").iterdir() if p.is_dir()]
    summary = json.loads((run_dir / "results" / "summary.json").read_text())
    assert summary["contigs_without_features"] == ["synth1"] and summary["in_features"] == 0
