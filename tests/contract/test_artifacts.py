"""Artifact types real workflows pass around (issue 15.5): each type's cheap check accepts a real file of
that type (made here with gzip, samtools and bcftools) and refuses a look-alike; a tab-separated file given
as csv-table, and a comma-separated one as tsv, are refused with the reason."""
import gzip
import shutil
import subprocess

import pytest

from snakegate.contract import artifacts
from snakegate.metaschemas import artifact_types

FASTQ = "@r1\nACGTACGT\n+\nIIIIIIII\n"
FASTA = ">chr1\nACGTACGTACGTACGTACGTACGTACGTACGT\n"
VCF = ("##fileformat=VCFv4.2\n##contig=<ID=chr1,length=32>\n"
       "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nchr1\t5\t.\tA\tG\t50\tPASS\t.\n")
SAM = "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr1\tLN:32\nr1\t0\tchr1\t1\t60\t8M\t*\t0\t0\tACGTACGT\tIIIIIIII\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("artifacts")
    out = {}
    for name, text in {"reads.fastq.gz": FASTQ, "genome.fa.gz": FASTA}.items():
        with gzip.open(d / name, "wt") as fh:
            fh.write(text)
        out[name] = d / name
    (d / "calls.vcf").write_text(VCF)
    (d / "aln.sam").write_text(SAM)
    (d / "table.tsv").write_text("a\tb\n1\t2\n")
    (d / "table.csv").write_text("a,b\n1,2\n")
    (d / "report.html").write_text("<!DOCTYPE html>\n<html><body>ok</body></html>\n")
    (d / "plot.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>\n')
    (d / "data.parquet").write_bytes(b"PAR1" + b"\x00" * 16 + b"PAR1")
    (d / "folder").mkdir()
    (d / "folder" / "x.txt").write_text("x\n")
    if shutil.which("samtools") and shutil.which("bcftools"):
        subprocess.run(["samtools", "view", "-b", "-o", d / "aln.bam", d / "aln.sam"], check=True)
        subprocess.run(["samtools", "index", d / "aln.bam"], check=True)
        subprocess.run(["bcftools", "view", "-Oz", "-o", d / "calls.vcf.gz", d / "calls.vcf"], check=True)
    for name in ("aln.bam", "aln.bam.bai", "calls.vcf.gz", "table.tsv", "table.csv", "report.html", "plot.svg",
                 "data.parquet", "folder", "calls.vcf"):
        out[name] = d / name
    return out


GOOD = [("fastq.gz", "reads.fastq.gz"), ("fasta.gz", "genome.fa.gz"), ("vcf.gz", "calls.vcf.gz"),
        ("bam", "aln.bam"), ("bai", "aln.bam.bai"), ("tsv", "table.tsv"), ("tsv-table", "table.tsv"),
        ("csv-table", "table.csv"), ("html", "report.html"), ("svg", "plot.svg"), ("parquet", "data.parquet"),
        ("directory", "folder"), ("vcf", "calls.vcf")]


@pytest.mark.parametrize("type_name, name", GOOD)
def test_a_real_file_of_each_type_passes_its_check(files, type_name, name):
    if not files[name].exists():
        pytest.skip("samtools/bcftools are not installed here")
    assert artifacts.check(files[name], type_name) is None


@pytest.mark.parametrize("type_name, name, says", [
    ("fastq.gz", "genome.fa.gz", "does not start with '@'"),
    ("fastq.gz", "calls.vcf", "not gzip-compressed"),
    ("bam", "reads.fastq.gz", "does not start with the bam signature"),
    ("vcf.gz", "calls.vcf", "not gzip-compressed"),
    ("html", "plot.svg", "<html>"),
    ("svg", "report.html", "<svg>"),
    ("directory", "table.csv", "expected a folder"),
    ("csv-table", "folder", "is a folder"),
])
def test_a_look_alike_is_refused_with_the_reason(files, type_name, name, says):
    problem = artifacts.check(files[name], type_name)
    assert problem is not None and says in problem


def test_a_tab_separated_file_given_as_csv_table_is_refused(files):
    problem = artifacts.check(files["table.tsv"], "csv-table")
    assert problem is not None
    assert "it is tab-separated (columns a, b)" in problem and "declare the param as tsv-table" in problem


def test_a_comma_separated_file_given_as_tsv_is_refused(files):
    problem = artifacts.check(files["table.csv"], "tsv")
    assert problem is not None and "it is comma-separated" in problem


def test_every_type_names_a_check_the_gate_knows():
    kinds = {"table", "json", "magic", "prefix", "text", "none", "gzip", "markup", "directory", "npz", "gff3"}
    assert {spec["check"] for spec in artifact_types().values()} <= kinds
