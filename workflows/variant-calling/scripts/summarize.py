"""Rule summarize: per-sample variant counts, transition/transversion ratio and coverage as one JSON.

The counts come from `bcftools stats -s -` (its SN, TSTV and PSC sections, read
by the column names in its own `# PSC ...` header lines) and the depth from
results/coverage.tsv; the mapped fraction from `samtools flagstat` (mapped / in total, QC-passed
reads). Ts/Tv is transitions / transversions among the SNP alleles
a sample carries (null when it carries no transversion); heterozygous and
homozygous_alt count SNP genotypes (bcftools' PSC), variant_sites adds the indels. Numbers are rounded to
6 significant digits and keys sorted, so the file is byte-stable.
"""
import json
import logging
import re

import numpy as np
import pandas as pd

DEPTH_THRESHOLD = 10


def sig(x):
    return None if x is None or not np.isfinite(x) else float(f"{x:.6g}")


def ratio(a, b):
    return sig(a / b) if b else None


def read_stats(path):
    """{section: [row dicts]} for the SN, TSTV and PSC sections of a bcftools stats report."""
    headers, rows = {}, {}
    with open(path) as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("# ") and len(fields) > 1:
                section = fields[0][2:]
                # '[3]sample' -> 'sample'
                headers[section] = [re.sub(r"^\[\d+\]", "", f) for f in fields]
            elif fields[0] in headers and not line.startswith("#"):
                rows.setdefault(fields[0], []).append(dict(zip(headers[fields[0]], fields)))
    return rows


def mapped_fraction(path):
    """Mapped reads / all reads (QC-passed) from samtools flagstat's text: `N + M in total`, `N + M mapped (`."""
    total = mapped = None
    with open(path) as fh:
        for line in fh:
            m = re.match(r"(\d+) \+ \d+ (in total|mapped \()", line)
            if m and m.group(2) == "in total" and total is None:
                total = int(m.group(1))
            elif m and m.group(2) != "in total" and mapped is None:
                mapped = int(m.group(1))
    if total is None or mapped is None:
        raise SystemExit(f"variant-calling summarize: {path} is not samtools flagstat output")
    return ratio(mapped, total)


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    samples = list(smk.params.samples)
    stats = read_stats(smk.input.stats)
    sn = {r["key"].rstrip(":"): int(r["value"]) for r in stats.get("SN", [])}
    tstv = stats.get("TSTV", [{}])[0]
    psc = {r["sample"]: r for r in stats.get("PSC", [])}
    missing = [s for s in samples if s not in psc]
    if missing:
        raise SystemExit(f"variant-calling summarize: bcftools stats has no per-sample counts for {missing}")

    coverage = pd.read_csv(smk.input.coverage, sep="\t", dtype={"contig": str})
    width = (coverage["end"] - coverage["start"]).to_numpy(float)
    fai = pd.read_csv(smk.input.fai, sep="\t", header=None, usecols=[0, 1], names=["contig", "length"],
                      dtype={"contig": str})

    flagstats = dict(zip(samples, smk.input.flagstats))
    per_sample = {}
    for s in samples:
        row = psc[s]
        ts, tv = int(row["nTransitions"]), int(row["nTransversions"])
        het, hom = int(row["nHets"]), int(row["nNonRefHom"])
        depth = coverage[s].to_numpy(float)
        per_sample[s] = {
            "variant_sites": het + hom + int(row["nIndels"]),
            "heterozygous": het,
            "homozygous_alt": hom,
            "snvs": ts + tv,
            "indels": int(row["nIndels"]),
            "transitions": ts,
            "transversions": tv,
            "ts_tv": ratio(ts, tv),
            "mapped_fraction": mapped_fraction(flagstats[s]),
            "mean_depth": sig(float(np.average(depth, weights=width))),
            "windows_below_10x_fraction": sig(float(np.average(depth < DEPTH_THRESHOLD, weights=width))),
        }
        logging.info("%s: %s", s, per_sample[s])

    ts_all, tv_all = int(tstv.get("ts", 0)), int(tstv.get("tv", 0))
    summary = {
        "reference": {"contigs": int(len(fai)), "length_bp": int(fai["length"].sum())},
        "filters": {"min_mapq": int(smk.params.min_mapq), "min_base_quality": int(smk.params.min_base_quality)},
        "calls": {
            "records": sn.get("number of records", 0),
            "snps": sn.get("number of SNPs", 0),
            "indels": sn.get("number of indels", 0),
            "multiallelic_sites": sn.get("number of multiallelic sites", 0),
            "transitions": ts_all,
            "transversions": tv_all,
            "ts_tv": ratio(ts_all, tv_all),
        },
        "samples": per_sample,
        "sample_order": samples,
    }
    with open(smk.output.summary, "w") as fh:
        json.dump(summary, fh, sort_keys=True, indent=2)
        fh.write("\n")


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
