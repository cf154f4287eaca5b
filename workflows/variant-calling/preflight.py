"""variant-calling preflight: what the gate proves before any job runs.

Refused, each with the fix: two samples with one name or one reads file; a reference the tools cannot
index or align to: text before the first `>` header or a sequence whose lines differ in length (samtools
faidx refuses both, as it refuses a sequence starting with a blank line or a last sequence
without letters), two sequences with one name (samtools refuses the alignments' header), a sequence
without a name, no sequence letters at all. The reference is indexed inside the run (bwa index, samtools
faidx), so no index files are needed beside it.

What it cannot see: a reads file damaged past its first bytes (a truncated gzip stream, a quality line
of the wrong length), which bwa mem reports when the run reads it; and a reference above the 64 MiB the
gate reads (its facts are absent), which the tools check when the run indexes it.

Pure: reads only its arguments (the resolved params and the read-only artifact views the gate passes),
never a file.
"""

SHOWN = 5


def _reference_findings(params, view):
    """Findings about the reference FASTA, from the gate's facts (none when the gate could not read them)."""
    names = view.get("contigs")
    if names is None:
        return []
    where = f"`reference` {params['reference']}"
    if view.get("format_problem"):
        return [{"path": "reference", "message": f"{where} cannot be indexed: {view['format_problem']}",
                 "hint": "rewrap the FASTA (e.g. `seqkit seq -w 60 in.fa > out.fa` or `samtools faidx` on a "
                         "clean copy) so every sequence's lines have one length, with no blank line before its "
                         "letters and no empty sequence at the end"}]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        shown = ", ".join(f"`{n}`" for n in repeated[:SHOWN])
        return [{"path": "reference",
                 "message": f"{where} names {len(repeated)} sequence name(s) more than once ({shown}); the "
                            "alignments' header would list them twice, which samtools refuses",
                 "hint": "give every sequence a unique name (the first word after `>`)"}]
    if "" in names:
        return [{"path": "reference", "message": f"{where} has a sequence without a name (a bare `>` line)",
                 "hint": "name every sequence: the first word after `>`"}]
    if not sum(view.get("lengths") or ()):
        return [{"path": "reference", "message": f"{where} holds no sequence letters",
                 "hint": "give the reference genome's FASTA, with its sequences"}]
    return []


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for params JSON Schema cannot refuse on its own."""
    found = _reference_findings(params, artifacts.get("reference") or {})
    first_with_name, first_with_reads = {}, {}
    for i, sample in enumerate(params["samples"]):
        name, reads = sample["name"], sample["reads"]
        if name in first_with_name:
            found.append({
                "path": f"samples[{i}].name",
                "message": (f"`samples[{i}].name` is `{name}`, the same as `samples[{first_with_name[name]}].name`; "
                            "sample names must be unique (each becomes one VCF column and one BAM file)"),
                "hint": f"rename one of them, e.g. `{name}_2`, or remove the repeated entry",
            })
        else:
            first_with_name[name] = i
        if reads in first_with_reads:
            j = first_with_reads[reads]
            found.append({
                "path": f"samples[{i}].reads",
                "message": (f"`samples[{i}].reads` and `samples[{j}].reads` are the same file `{reads}`; two samples "
                            "called from the same reads would look like identical twins"),
                "hint": f"give sample `{name}` its own reads file, or remove one of the two entries",
            })
        else:
            first_with_reads[reads] = i
    return found
