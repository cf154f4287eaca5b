"""Rule windows: tile every contig of the reference (from its .fai) into equal windows for the coverage plot.

The window length is the total reference length / 500, rounded up to 1, 2 or 5
times a power of ten, and at least 100 bp: about 500 windows whatever the genome
size (100 bp for 50 kb, 10 Mb for a 3 Gb genome). A contig's last window ends at
the contig's end. Writes BED (0-based start, end exclusive), in .fai order.
"""
import logging
import math

TARGET_WINDOWS = 500
MIN_WINDOW = 100

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,  # noqa: F821
                    format="%(levelname)s %(message)s")


def nice_ceiling(x):
    """The smallest of 1, 2, 5 x 10^k that is >= x."""
    power = 10 ** math.floor(math.log10(x))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= x)


contigs = []
with open(snakemake.input.fai) as fh:  # noqa: F821
    for line in fh:
        name, length = line.split("\t")[:2]
        contigs.append((name, int(length)))
total = sum(length for _, length in contigs)
window = max(MIN_WINDOW, nice_ceiling(total / TARGET_WINDOWS))
n = 0
with open(snakemake.output.windows, "w") as out:  # noqa: F821
    for name, length in contigs:
        for start in range(0, length, window):
            out.write(f"{name}\t{start}\t{min(start + window, length)}\n")
            n += 1
logging.info("%d contigs, %d bp: %d windows of %d bp", len(contigs), total, n, window)
