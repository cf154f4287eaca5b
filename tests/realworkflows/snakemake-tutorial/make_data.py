"""Make the tutorial's tiny test data (fixed seed): a 3 kb genome, its bwa index, 300 reads per sample.

Snakemake's tutorial data (snakemake/snakemake-tutorial-data) ships no licence, so the same shape of data
is generated here instead: data/tutorial/genome.fa (+ bwa index) and data/tutorial/samples/{A,B,C}.fastq
under tests/realworkflows/registry/. Each sample carries a few SNPs against the genome so bcftools calls
variants. Run: python tests/realworkflows/snakemake-tutorial/make_data.py (needs bwa on PATH).
"""
import random
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "registry" / "data" / "tutorial"
rng = random.Random(20261124)
genome = "".join(rng.choice("ACGT") for _ in range(3000))
OUT.joinpath("samples").mkdir(parents=True, exist_ok=True)
(OUT / "genome.fa").write_text(">chr1\n" + "\n".join(genome[i:i + 60] for i in range(0, len(genome), 60)) + "\n")
subprocess.run(["bwa", "index", str(OUT / "genome.fa")], check=True, capture_output=True)
snps = {pos: rng.choice([b for b in "ACGT" if b != genome[pos]]) for pos in sorted(rng.sample(range(100, 2900), 6))}
for sample in ("A", "B", "C"):
    mutated = list(genome)
    for pos, base in snps.items():
        if sample != "C" or pos % 2 == 0:
            mutated[pos] = base
    seq = "".join(mutated)
    lines = []
    for i in range(300):
        start = rng.randrange(0, len(seq) - 100)
        read = seq[start:start + 100]
        lines += [f"@{sample}_{i}", read, "+", "I" * 100]
    (OUT / "samples" / f"{sample}.fastq").write_text("\n".join(lines) + "\n")
