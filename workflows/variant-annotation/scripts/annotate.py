"""Rule annotate: the input VCF with the features of each variant added to its INFO column.

Every header line and record is kept, byte for byte, except that two ##INFO lines (FEATURE, FEATURE_TYPE)
are added just before #CHROM and, on each record that falls in a feature, `FEATURE=a,b;FEATURE_TYPE=gene,exon`
is appended to INFO (it replaces INFO when that is '.'). A VCF annotated before keeps no older FEATURE or
FEATURE_TYPE: its header lines and values are replaced, never doubled.

The i-th record pairs with the i-th row of results/variants.tsv (both come from the same file, in its order);
a record whose CHROM, POS, REF and ALT differ from its row stops the job rather than annotate the wrong
variant. Lines end in '\\n' whatever the input used.
"""
import csv
import logging

TAGS = ("FEATURE", "FEATURE_TYPE")
HEADER = [
    '##INFO=<ID=FEATURE,Number=.,Type=String,Description="Names of the features (GFF3 Name, else ID, else '
    'contig:start-end) the variant falls in, outermost first">',
    '##INFO=<ID=FEATURE_TYPE,Number=.,Type=String,Description="Types (GFF3 column 3) of the features in FEATURE, '
    'in the same order">',
]


def defines_tag(line):
    return any(line.startswith(f"##INFO=<ID={tag},") for tag in TAGS)


def with_features(info, row):
    kept = [item for item in info.split(";") if item not in ("", ".") and item.partition("=")[0] not in TAGS]
    if row["feature"]:
        kept += [f"FEATURE={row['feature']}", f"FEATURE_TYPE={row['feature_type']}"]
    return ";".join(kept) or "."


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    with open(smk.input.variants, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    annotated = 0
    with open(smk.input.vcf, encoding="utf-8") as vcf, \
            open(smk.output.annotated, "w", encoding="utf-8", newline="\n") as out:
        records = iter(rows)
        for number, line in enumerate(vcf, 1):
            line = line.rstrip("\n").rstrip("\r")
            if line.startswith("##"):
                if defines_tag(line):
                    logging.info("replacing the input's own %s", line.split(",")[0])
                else:
                    out.write(line + "\n")
                continue
            if line.startswith("#CHROM"):
                out.write("".join(h + "\n" for h in HEADER) + line + "\n")
                continue
            if not line.strip():
                continue
            fields = line.split("\t")
            row = next(records, None)
            if row is None or len(fields) < 8 or fields[:2] + fields[3:5] != [row["chrom"], row["pos"], row["ref"],
                                                                             row["alt"]]:
                raise SystemExit(f"variant-annotation annotate: {smk.input.vcf} line {number} "
                                 f"({' '.join(fields[:5])[:80]}) does not match its row in "
                                 f"{smk.input.variants} ({row and ' '.join(row[c] for c in ('chrom', 'pos', 'ref', 'alt'))})")
            fields[7] = with_features(fields[7], row)
            annotated += bool(row["feature"])
            out.write("\t".join(fields) + "\n")
        if next(records, None) is not None:
            raise SystemExit(f"variant-annotation annotate: {smk.input.variants} has more rows than "
                             f"{smk.input.vcf} has records")
    logging.info("%d of %d records annotated", annotated, len(rows))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
