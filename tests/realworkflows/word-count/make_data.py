"""Make the word-count workflow's tiny test data (fixed seed): two short texts of a few hundred words.

CodeRefinery's word-count ships four Project Gutenberg books under the Gutenberg licence (not MIT), so none
is copied: the same shape of data is generated here instead, words drawn with Zipf-like weights so the ten
most common words differ between the texts. Writes data/word-count/{isles,abyss}.txt under
tests/realworkflows/registry/. Run: python tests/realworkflows/word-count/make_data.py
"""
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "registry" / "data" / "word-count"
WORDS = ("the of and to a in that it was he his with for as had is on at by not be which from this "
         "island sea shore rock boat wind street house night poor work city bread").split()
OUT.mkdir(parents=True, exist_ok=True)
rng = random.Random(20261126)
for book in ("isles", "abyss"):
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    rng.shuffle(weights)
    words = rng.choices(WORDS, weights=weights, k=400)
    lines = [" ".join(words[i:i + 12]).capitalize() + "." for i in range(0, len(words), 12)]
    (OUT / f"{book}.txt").write_text("\n".join(lines) + "\n")
