"""variant-annotation preflight: the VCF and the feature file must name their contigs the same way.

A VCF on `chr1, chr2, ...` against features on `1, 2, ...` (or features for another genome) runs to the
end and annotates nothing; this refuses it before any job. The gate's view of each file holds its contig
names (`contigs`) when its first 64 KiB prove the whole list: a VCF's ##contig header, a GFF3's
##sequence-region lines, or every record of a small file. Without both lists (a large file without
declarations, or a VCF another step will produce) there is nothing to prove and this passes; the run's
summary then lists the contigs that carry variants but no feature.

Pure: reads only its arguments, never a file.
"""

SHOWN = 5


def listed(names):
    """`a`, `b`, `c` (n in all)"""
    shown = ", ".join(f"`{n}`" for n in names[:SHOWN])
    return shown + (f", … ({len(names)} in all)" if len(names) > SHOWN else "")


def without_chr(name):
    return name[3:] if name.lower().startswith("chr") else name


def naming_hint(vcf_contigs, feature_contigs):
    """How to make the two namings agree: the `chr` prefix when that is all that differs."""
    bare_vcf = {without_chr(c) for c in vcf_contigs}
    if bare_vcf & {without_chr(c) for c in feature_contigs}:
        with_prefix = "the VCF" if any(c.lower().startswith("chr") for c in vcf_contigs) else "the feature file"
        return (f"only the `chr` prefix differs: {with_prefix} has it. Rename the contigs of one file (for the VCF: "
                "`bcftools annotate --rename-chrs old_new.txt`), or give the feature file made for the VCF's "
                "reference genome")
    return ("give the feature file of the genome the VCF was called against (the same assembly and contig names), "
            "or rename the contigs of one file (for the VCF: `bcftools annotate --rename-chrs old_new.txt`)")


def preflight(params, artifacts):
    """One finding when the VCF's and the feature file's contig names have none in common."""
    vcf_contigs = list(artifacts.get("vcf", {}).get("contigs") or ())
    feature_contigs = list(artifacts.get("features", {}).get("contigs") or ())
    if not vcf_contigs or not feature_contigs or set(vcf_contigs) & set(feature_contigs):
        return []
    return [{
        "path": "features",
        "message": (f"`vcf` ({params['vcf']}) names its contigs {listed(vcf_contigs)} and `features` "
                    f"({params['features']}) names {listed(feature_contigs)}: no contig is in both, so no variant "
                    "could fall in a feature"),
        "hint": naming_hint(vcf_contigs, feature_contigs),
    }]
