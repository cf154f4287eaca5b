"""A FASTA's facts say what samtools faidx will make of it: the sequences' names and lengths its index
lists, and a format problem exactly when it refuses the file. Held to the real samtools on drawn layouts
(line widths, blank lines, empty sequences, text before the first header)."""
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snakegate.contract import sequence_facts
from snakegate.contract.sequence_facts import fasta_facts

pytestmark = pytest.mark.skipif(shutil.which("samtools") is None, reason="samtools is not installed")

line = st.text(alphabet="ACGTN", min_size=0, max_size=9)
record = st.tuples(st.sampled_from(["chr1", "chr2", "x y", "scaffold_3"]), st.lists(line, min_size=1, max_size=5))


def faidx(path):
    proc = subprocess.run(["samtools", "faidx", str(path)], capture_output=True, text=True)
    if proc.returncode:
        return None
    return [(row.split("\t")[0], int(row.split("\t")[1]))
            for row in path.with_name(path.name + ".fai").read_text().splitlines()]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(record, min_size=1, max_size=4, unique_by=lambda r: r[0]), preamble=st.booleans())
def test_a_format_problem_is_found_exactly_when_samtools_faidx_refuses(tmp_path, records, preamble):
    text = ("ACGT\n" if preamble else "") + "".join(f">{name}\n" + "".join(l + "\n" for l in lines)
                                                     for name, lines in records)
    path = tmp_path / "ref.fa"
    path.write_text(text)
    for old in tmp_path.glob("ref.fa.fai"):
        old.unlink()
    facts, indexed = fasta_facts(path), faidx(path)
    assert (facts["format_problem"] is None) == (indexed is not None), (text, facts["format_problem"])
    if indexed is not None:
        named = [(n, length) for n, length in zip(facts["contigs"], facts["lengths"])]
        # faidx leaves empty sequences out of its index
        assert [(n, length) for n, length in named if length] == [(n, length) for n, length in indexed if length]


def test_repeated_names_are_kept_so_a_preflight_can_refuse_them(tmp_path):
    path = tmp_path / "dup.fa"
    path.write_text(">a\nACGT\n>a desc\nGG\n")
    assert fasta_facts(path)["contigs"] == ["a", "a"] and fasta_facts(path)["lengths"] == [4, 2]


def test_a_reference_above_the_bound_has_no_facts_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(sequence_facts, "FASTA_MAX_BYTES", 8)
    path = tmp_path / "big.fa"
    path.write_text(">a\nACGTACGTACGT\n")
    facts = fasta_facts(path)
    assert facts["contigs"] is None and "the tools check it" in facts["facts_absent"]


def test_windows_line_ends_are_not_letters(tmp_path):
    path = tmp_path / "crlf.fa"
    path.write_bytes(b">a\r\nACGTA\r\nAC\r\n")
    assert fasta_facts(path)["lengths"] == [7] and fasta_facts(path)["format_problem"] is None
