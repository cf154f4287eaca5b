"""Rule plot_depth: mean read depth per window along the reference, per sample, with the called variant sites.

Reads `samtools bedcov -j` output (contig, start, end, then per BAM the summed
per-base depth in the window, in sample order) and writes
results/coverage.tsv (one row per window: contig, start, end, one mean-depth
column per sample) and results/depth.png: depth along the reference (contigs
laid end to end, boundaries dashed), one line per sample, and below it one row
of ticks per sample at the sites where that sample carries a non-reference
allele (full height: homozygous, half height: heterozygous). Fixed formats and no time stamps, so both files are byte-stable.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

MAX_LABELLED_CONTIGS = 30


def read_coverage(path, samples):
    columns = ["contig", "start", "end", *samples]
    table = pd.read_csv(path, sep="\t", header=None, names=columns, dtype={"contig": str})
    if table.shape[1] != len(columns) or table[samples].isna().any().any():
        raise SystemExit(f"variant-calling plot_depth: {path} does not have one depth column per sample ({samples})")
    width = (table["end"] - table["start"]).to_numpy(float)
    for s in samples:
        table[s] = table[s].to_numpy(float) / width
    return table


def read_sites(path, samples):
    """{sample: [(contig, pos, homozygous)]} of sites where the sample's genotype holds a non-reference allele."""
    carried = {s: [] for s in samples}
    with open(path) as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            contig, pos = fields[0], int(fields[1])
            for entry in fields[3:]:
                sample, _, gt = entry.rpartition("=")
                alleles = gt.replace("|", "/").split("/")
                if sample in carried and any(a not in ("0", ".") for a in alleles):
                    carried[sample].append((contig, pos, len(set(alleles)) == 1))
    return carried


def axis_unit(total):
    return (1e6, "Mb") if total >= 5e6 else (1e3, "kb") if total >= 5e3 else (1.0, "bp")


def plot(table, carried, samples, min_mapq, path):
    contigs = list(dict.fromkeys(table["contig"]))
    lengths = table.groupby("contig", sort=False)["end"].max()
    offsets = dict(zip(contigs, np.concatenate([[0], np.cumsum([lengths[c] for c in contigs])[:-1]])))
    total = float(sum(lengths[c] for c in contigs))
    scale, unit = axis_unit(total)
    window = int((table["end"] - table["start"]).max())

    fig, (ax, rug) = plt.subplots(2, 1, figsize=(10, 5.6), sharex=True,
                                  gridspec_kw={"height_ratios": [4, max(1, 0.35 * len(samples))]})
    colors = plt.get_cmap("tab10")
    x_mid = np.array([offsets[c] for c in table["contig"]]) + (table["start"] + table["end"]).to_numpy(float) / 2
    for k, sample in enumerate(samples):
        ax.plot(x_mid / scale, table[sample], lw=1.0, color=colors(k % 10),
                label=f"{sample} (mean {np.average(table[sample], weights=table['end'] - table['start']):.1f}x)")
        for hom, low in ((True, 0.1), (False, 0.5)):
            xs = [(offsets[c] + p) / scale for c, p, h in carried[sample] if c in offsets and h == hom]
            rug.vlines(xs, k + low, k + 0.9, color=colors(k % 10), lw=0.8)
    for c in contigs[1:]:
        for a in (ax, rug):
            a.axvline(offsets[c] / scale, color="0.6", lw=0.6, ls="--")
    if 1 < len(contigs) <= MAX_LABELLED_CONTIGS:
        for c in contigs:
            ax.text((offsets[c] + lengths[c] / 2) / scale, 1.0, c, transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=7, color="0.3")
    ax.set_ylabel("mean read depth (x)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Read depth along the reference ({window:,} bp windows, mapping quality ≥ {min_mapq})",
                 pad=14 if len(contigs) > 1 else 6)
    ax.legend(loc="lower right", fontsize=8, frameon=True)
    ax.grid(axis="y", color="0.9")
    rug.set_yticks(np.arange(len(samples)) + 0.5, samples, fontsize=8)
    rug.set_ylim(len(samples), 0)  # first sample on top, as in the legend
    rug.set_ylabel("sample", fontsize=8)
    rug.set_title("Called variant sites per sample", fontsize=9)
    # what a tick's height means, in the panel's own legend (its colour is the sample's, as above)
    rug.legend(handles=[Line2D([], [], color="0.3", lw=0, marker="|", ms=9, mew=1.2, label="homozygous (tall tick)"),
                        Line2D([], [], color="0.3", lw=0, marker="|", ms=5, mew=1.2, label="heterozygous (short tick)")],
               loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7, frameon=False)
    rug.set_xlabel(f"position on the reference ({unit}" + (", contigs end to end)" if len(contigs) > 1 else ")"))
    rug.set_xlim(0, total / scale)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    samples = list(smk.params.samples)
    table = read_coverage(smk.input.bedcov, samples)
    carried = read_sites(smk.input.sites, samples)
    table.to_csv(smk.output.coverage, sep="\t", index=False, float_format="%.3f", lineterminator="\n")
    plot(table, carried, samples, int(smk.params.min_mapq), smk.output.depth_plot)
    for s in samples:
        logging.info("%s: %d windows, mean depth %.2f, %d variant sites", s, len(table), table[s].mean(),
                     len(carried[s]))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
