"""The gff3 artifact type and the contig names the gate shows a preflight for a VCF or a GFF3.

The cheap gff3 check passes the demo feature file and refuses what a GFF3 reader would choke on (a GTF,
space-separated columns, start after end), naming the line. `sequence_names` gives a file's contig
names only when the first 64 KiB prove the whole list (declared in the header, or the whole file read);
otherwise None, so no preflight refuses on a guess.
"""
from pathlib import Path

import pytest

from snakegate.contract import artifacts
from snakegate.contract.artifacts import HEAD_BYTES

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "examples" / "variant-annotation"
FEATURE = "ctg1\tsrc\tgene\t10\t20\t.\t+\t.\tID=g1;Name=one\n"
VCF_HEAD = "##fileformat=VCFv4.2\n"
VCF_COLUMNS = "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def vcf_records(contig: str, n: int) -> str:
    return "".join(f"{contig}\t{i + 1}\t.\tA\tG\t50\tPASS\t.\n" for i in range(n))


def test_the_demo_feature_file_and_one_with_a_fasta_section_pass_the_gff3_check(tmp_path):
    assert artifacts.check(DEMO / "features.gff3", "gff3") is None
    fasta = write(tmp_path, "f.gff3", "##gff-version 3.1.26\n" + FEATURE + "##FASTA\n>ctg1\nACGT ACGT\n")
    assert artifacts.check(fasta, "gff3") is None


@pytest.mark.parametrize("text, says", [
    ('ctg1\tsrc\tgene\t10\t20\t.\t+\t.\tgene_id "g1";\n', "not '##gff-version 3' (a GTF or GFF2 file must be converted"),
    ("##gff-version 2\n" + FEATURE, "its first line is '##gff-version 2'"),
    ("##gff-version 30\n" + FEATURE, "not '##gff-version 3'"),
    ("##gff-version 3\n" + FEATURE.replace("\t", " "), "line 2 has 1 tab-separated column(s), not 9"),
    ("##gff-version 3\n# a comment\n\n" + FEATURE + "ctg1\tsrc\texon\t30\t25\t.\t+\t.\tParent=g1\n",
     "line 5 has start '30' and end '25'"),
    ("##gff-version 3\nctg1\tsrc\tgene\t0\t20\t.\t+\t.\tID=g1\n", "1 <= start <= end"),
    ("##gff-version 3\nctg1\tsrc\tgene\t1e3\t2000\t.\t+\t.\tID=g1\n", "start '1e3'"),
])
def test_a_file_that_is_not_gff3_is_refused_naming_the_line(tmp_path, text, says):
    problem = artifacts.check(write(tmp_path, "f.gff3", text), "gff3")
    assert problem is not None and says in problem, problem


def test_vcf_contigs_come_from_its_contig_header_in_order_with_any_undeclared_record_contig(tmp_path):
    text = VCF_HEAD + "##contig=<ID=chr2,length=9>\n##contig=<ID=chr1,length=9>\n" + VCF_COLUMNS + vcf_records("chrX", 1)
    assert artifacts.sequence_names(write(tmp_path, "a.vcf", text), "vcf") == ["chr2", "chr1", "chrX"]


def test_a_large_vcf_whose_header_declares_its_contigs_still_gives_them(tmp_path):
    text = VCF_HEAD + "##contig=<ID=1,length=9>\n" + VCF_COLUMNS + vcf_records("1", 4000)
    path = write(tmp_path, "a.vcf", text)
    assert path.stat().st_size > HEAD_BYTES
    assert artifacts.sequence_names(path, "vcf") == ["1"]


def test_contig_names_are_none_when_the_first_64_kib_cannot_prove_the_whole_list(tmp_path):
    undeclared = write(tmp_path, "undeclared.vcf", VCF_HEAD + VCF_COLUMNS + vcf_records("1", 4000))
    long_header = write(tmp_path, "long.vcf", VCF_HEAD + "".join(f"##contig=<ID=scaffold{i},length=9>\n"
                                                                  for i in range(3000)) + VCF_COLUMNS)
    big_gff3 = write(tmp_path, "big.gff3", "##gff-version 3\n" + FEATURE * 2000)
    assert min(p.stat().st_size for p in (undeclared, long_header, big_gff3)) > HEAD_BYTES
    assert artifacts.sequence_names(undeclared, "vcf") is None
    assert artifacts.sequence_names(long_header, "vcf") is None
    assert artifacts.sequence_names(big_gff3, "gff3") is None


def test_gff3_contigs_come_from_sequence_regions_or_from_every_record_of_a_small_file(tmp_path):
    small = write(tmp_path, "small.gff3", "##gff-version 3\n" + FEATURE + FEATURE.replace("ctg1", "ctg2")
                  + "##FASTA\n>ctg9\nACGT\n")
    assert artifacts.sequence_names(small, "gff3") == ["ctg1", "ctg2"]
    declared = write(tmp_path, "big.gff3", "##gff-version 3\n##sequence-region ctg3 1 100\n" + FEATURE * 2000)
    assert artifacts.sequence_names(declared, "gff3") == ["ctg3", "ctg1"]
    assert artifacts.sequence_names(DEMO / "features.gff3", "gff3") == ["synth1"]
    assert artifacts.sequence_names(DEMO / "calls.vcf", "vcf") == ["synth1"]


def test_types_that_name_no_sequences_give_no_contigs(tmp_path):
    assert artifacts.sequence_names(write(tmp_path, "t.csv", "a,b\n1,2\n"), "csv-table") is None
    assert artifacts.sequence_names(write(tmp_path, "w.bed", "ctg1\t0\t10\n"), "bed") is None
