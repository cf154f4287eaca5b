"""What a preflight may know of a FASTA file beyond its first bytes: its sequences' names and lengths, and
the first thing in it that `samtools faidx` (and so every tool that indexes it) refuses; one bounded
streaming pass.

`fasta_facts(path)` returns plain data:

- `contigs`: the sequence names (the first word after `>`), in file order, repeats kept;
- `lengths`: each sequence's length in letters (line ends and a trailing `\\r` not counted);
- `format_problem`: a sentence naming the line, or None. As samtools faidx reads a FASTA: text before the
  first `>` header; within a sequence, a line of another length than the sequence's first line that is
  not its last (blank lines at a sequence's end are allowed, a blank line followed by more letters is not);
  a last sequence without letters (an empty sequence before another header is left out of the index);
- `facts_absent`: why the three are None (a file larger than FASTA_MAX_BYTES: a large genome is checked by
  the tools when the run indexes it), else None.

Reads the file once, line by line (never the whole file in memory); writes nothing.
"""

from __future__ import annotations

from pathlib import Path

FASTA_MAX_BYTES = 64 * 1024 * 1024


def fasta_facts(path: Path) -> dict:
    """Names, lengths and the first indexing problem of a plain FASTA file; OSError propagates."""
    size = path.stat().st_size
    if size > FASTA_MAX_BYTES:
        return {"contigs": None, "lengths": None, "format_problem": None,
                "facts_absent": f"the file is {size / 2 ** 20:.0f} MiB, above the {FASTA_MAX_BYTES // 2 ** 20} MiB "
                                "the gate reads; the tools check it when the run indexes it"}
    names: list[str] = []
    lengths: list[int] = []
    problem = None
    width = None        # the length of the current sequence's first line
    short_at = None     # the line number of a line shorter than `width` (it must be the sequence's last)
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.rstrip(b"\n").rstrip(b"\r")
            if line.startswith(b">"):
                words = line[1:].split()
                names.append(words[0].decode("utf-8", "replace") if words else "")
                lengths.append(0)
                width, short_at = None, None
                continue
            if problem is not None:
                continue
            if not names:
                if line.strip():
                    problem = f"line {number} holds sequence text before the first `>` header"
                continue
            if width is None:
                if line and short_at is not None:
                    problem = (f"sequence `{names[-1]}` starts with a blank line (line {short_at}) before its "
                               "letters (samtools faidx refuses it)")
                elif line:
                    width = len(line)
                    lengths[-1] += len(line)
                else:
                    short_at = short_at or number
                continue
            if not line:
                short_at = short_at or number
                continue
            if short_at is not None or len(line) > width:
                where = short_at if short_at is not None else number
                problem = (f"sequence `{names[-1]}` has lines of different lengths (line {where}); every line of a "
                           "sequence but its last must be as long as its first (samtools faidx refuses it)")
                continue
            if len(line) < width:
                short_at = number
            lengths[-1] += len(line)
    if problem is None and names and not lengths[-1]:
        problem = f"the last sequence, `{names[-1]}`, has no letters (samtools faidx refuses a file that ends so)"
    return {"contigs": names, "lengths": lengths, "format_problem": problem, "facts_absent": None}
