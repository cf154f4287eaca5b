"""Generate the synthetic variant-calling data set (fixed seed): a reference, two samples' reads, the truth.

- reference.fa: one 50,000 bp contig `synth1`, uniform random bases (no repeats
  longer than chance), 60 bases per line.
- Two diploid samples, `alpha` and `beta`, each carrying planted SNPs: 24 shared
  and 16 private per sample, every SNP at least 150 bp from the contig ends and
  40 bp from the next; genotypes heterozygous (0/1) or homozygous (1/1).
- <sample>.fq.gz: single-end 100 bp reads at 30x (15,000 per sample), each read
  from one of the sample's two haplotypes, on either strand. Base qualities are
  Q37 with a 0.1 % error rate, except 1 % of bases at Q5 with a 25 % error rate,
  so `min_base_quality` matters. Reads are written in the order of their start
  on the contig: alignment does not care, and gzip then shrinks the file ~4x.
  gzip headers carry no name or time, so the bytes depend on the seed alone.
- planted.tsv: the truth (pos, ref, alt, and each sample's genotype).

Writes workflows/variant-calling/test/data/ (test inputs) and
data/examples/variant-calling/ (example inputs, same content).
Run from anywhere: python workflows/variant-calling/test/data/make_data.py
"""
import gzip
import io
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]  # registry root: workflows/variant-calling/test/data -> root
SEED = 20260117
CONTIG = "synth1"
LENGTH = 50_000
READ_LENGTH = 100
COVERAGE = 30
SAMPLES = ("alpha", "beta")
N_SHARED, N_PRIVATE = 24, 16
EDGE, MIN_GAP = 150, 40
HOM_FRACTION = 0.4
Q_GOOD, ERR_GOOD = 37, 0.001
Q_BAD, ERR_BAD, BAD_FRACTION = 5, 0.25, 0.01
BASES = np.array(list("ACGT"))
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def plant_sites(rng):
    """Sorted SNP positions (0-based) at least MIN_GAP apart and EDGE from the ends."""
    n = N_SHARED + N_PRIVATE * len(SAMPLES)
    while True:
        pos = np.sort(rng.choice(np.arange(EDGE, LENGTH - EDGE), size=n, replace=False))
        if np.all(np.diff(pos) >= MIN_GAP):
            return pos


def make_truth(rng, reference):
    """[(pos0, ref, alt, {sample: genotype})] with genotypes '0/1', '1/1' or '0/0'."""
    positions = plant_sites(rng)
    owners = ["shared"] * N_SHARED + [s for s in SAMPLES for _ in range(N_PRIVATE)]
    owners = list(rng.permutation(owners))
    truth = []
    for pos, owner in zip(positions, owners):
        ref = reference[pos]
        alt = str(rng.choice([b for b in "ACGT" if b != ref]))
        carriers = SAMPLES if owner == "shared" else (owner,)
        genotypes = {s: ("1/1" if rng.random() < HOM_FRACTION else "0/1") if s in carriers else "0/0"
                     for s in SAMPLES}
        truth.append((int(pos), ref, alt, genotypes))
    return truth


def haplotypes(reference, truth, sample, rng):
    """The sample's two haplotype sequences: hom SNPs on both, het SNPs on one chosen at random."""
    haps = [list(reference), list(reference)]
    for pos, _, alt, genotypes in truth:
        gt = genotypes[sample]
        if gt == "1/1":
            haps[0][pos] = haps[1][pos] = alt
        elif gt == "0/1":
            haps[int(rng.integers(2))][pos] = alt
    return ["".join(h) for h in haps]


def simulate_reads(rng, haps, sample):
    """FASTQ text of COVERAGE x single-end reads from the two haplotypes, in start order."""
    n = COVERAGE * LENGTH // READ_LENGTH
    starts = np.sort(rng.integers(0, LENGTH - READ_LENGTH + 1, size=n))
    out = io.StringIO()
    for i, start in enumerate(starts):
        seq = np.array(list(haps[int(rng.integers(2))][start:start + READ_LENGTH]))
        bad = rng.random(READ_LENGTH) < BAD_FRACTION
        error = rng.random(READ_LENGTH) < np.where(bad, ERR_BAD, ERR_GOOD)
        for j in np.flatnonzero(error):
            seq[j] = rng.choice([b for b in BASES if b != seq[j]])
        qual = np.where(bad, Q_BAD, Q_GOOD)
        text = "".join(seq)
        if rng.random() < 0.5:  # reverse strand: the sequencer reads the other strand 5'->3'
            text = text.translate(COMPLEMENT)[::-1]
            qual = qual[::-1]
        out.write(f"@{sample}_{i + 1:05d}\n{text}\n+\n{''.join(chr(33 + q) for q in qual)}\n")
    return out.getvalue()


def write_gzip(path, text):
    """gzip without a file name or time stamp in its header, so the bytes are reproducible."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("ascii"))


def main():
    rng = np.random.default_rng(SEED)
    reference = "".join(rng.choice(BASES, size=LENGTH))
    truth = make_truth(rng, reference)
    files = {"reference.fa": f">{CONTIG} synthetic reference, seed {SEED}\n"
                             + "".join(reference[i:i + 60] + "\n" for i in range(0, LENGTH, 60))}
    for sample in SAMPLES:
        files[f"{sample}.fq.gz"] = simulate_reads(rng, haplotypes(reference, truth, sample, rng), sample)
    files["planted.tsv"] = "contig\tpos\tref\talt\t" + "\t".join(SAMPLES) + "\n" + "".join(
        f"{CONTIG}\t{pos + 1}\t{ref}\t{alt}\t" + "\t".join(gt[s] for s in SAMPLES) + "\n"
        for pos, ref, alt, gt in truth)
    for folder in (HERE, ROOT / "data" / "examples" / "variant-calling"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            if name.endswith(".gz"):
                write_gzip(folder / name, text)
            else:
                (folder / name).write_text(text)
            print(f"wrote {folder / name} ({(folder / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
