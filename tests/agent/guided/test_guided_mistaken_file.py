"""A file said for the wrong param is named back, with why it does not fit, and no other file takes its place
from the request's words (issue 26 bench, calling-mistake: "using …alpha.fq.gz as the reference" got
"reference = …reference.fa (the one data file it names)"). Real Conversation, guided backend, actions."""

from __future__ import annotations

from test_guided import said
from test_guided_file_types import READS, chat, root  # noqa: F401  (root: its registry with variant-calling)


def test_reads_given_as_the_reference_are_named_as_fastq_and_no_fasta_is_picked_for_it(root):
    text = said(chat(root).send("Call variants in data/examples/variant-calling/beta.fq.gz using "
                                f"{READS} as the reference."))
    assert (f"I did not take `reference` from your request: `{READS}` is a fastq.gz file, not a fasta file"
            in text)
    assert "the one data file it names" not in text
    assert "`reference` = `data/examples/variant-calling/reference.fa`" not in text
    assert "`reference`** (string, required)" in text   # asked, with the FASTA files offered
