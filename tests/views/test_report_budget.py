"""`snakegate report` keeps a page to its budget whatever a run wrote, and links a parent only when it is a run id.

A real run of a test workflow (real Snakemake) writes sixteen per-sample plots of ~1.5 MB each (real PNGs of
random pixels: incompressible), one 3 MB plot, and a 400 MB text output (sparse: 20 real lines, then zeros). The
page embeds what fits (2 MiB per image, 8 MiB in all), lists the rest with path, size and sha256, shows the text's
first lines without reading it whole, and `snakegate report` stays small in memory (its peak resident size is
read from the kernel's accounting of a child process). A parent recorded as `../../etc` or `javascript:` (written
into a copy of a real run's run.json) is shown as text, never as a link.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys

import pytest

from registry_copies import clean_env, make_registry, new_run, run_names, snakegate
from snakegate.views.report import IMAGE_BYTES, IMAGES_BYTES

PLOTS = [f"plot_{i:02d}" for i in range(1, 17)]
BIG_TEXT = 400 * 1024 * 1024
MAX_RSS_KIB = 300 * 1024  # reading the 400 MB text whole (as before) takes more than this on its own
PAGE_BYTES = 12 * 1024 * 1024  # 8 MiB of images, base64-encoded, plus the page's text

_OUTPUTS = {**{p: ("png", f"results/{p}.png") for p in PLOTS}, "hires": ("png", "results/hires.png"),
            "listing": ("text", "results/listing.txt")}
BIG_OUTPUTS = {
    "workflow.yaml": "\n".join([
        "id: big-outputs", "version: 0.1.0", "title: Big outputs",
        "description: Sixteen per-sample plots, one high-resolution plot and a huge text output.",
        "tags: [test]", "maintainers: [{name: snakegate tests}]", "trust: community",
        "rules:", "  plots:", "    output:", *[f"      {n}: {t}" for n, (t, _) in _OUTPUTS.items()],
        "outputs:", *[f"  {n}: {{path: {p}, type: {t}, description: Output {n}.}}" for n, (t, p) in _OUTPUTS.items()],
    ]) + "\n",
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "properties": {"side": {"type": "integer", "minimum": 1, "default": 700,
                                "description": "Pixels per side of each per-sample plot."}}}),
    "Snakefile": "\n".join([
        "rule all:", "    input:", *[f'        "{p}",' for _, p in _OUTPUTS.values()], "", "",
        "rule plots:", "    output:", *[f'        {n}="{p}",' for n, (_, p) in _OUTPUTS.items()],
        "    params:", '        side=config["side"],', "    script:", '        "scripts/plots.py"',
    ]) + "\n",
    "scripts/plots.py": f"""\
        import os, random, struct, zlib

        def png(path, side, seed):
            rng = random.Random(seed)
            raw = b"".join(b"\\x00" + rng.randbytes(side * 3) for _ in range(side))

            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

            with open(path, "wb") as fh:
                fh.write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
                         + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))

        side = snakemake.params.side
        for i, name in enumerate({PLOTS!r}):
            png(snakemake.output[name], side, i)
        png(snakemake.output.hires, 1000, 99)
        with open(snakemake.output.listing, "w") as fh:
            fh.writelines(f"sample {{i:02d}}: ok\\n" for i in range(1, 21))
        os.truncate(snakemake.output.listing, {BIG_TEXT})  # the rest: zeros that take no disk
        """,
}
_MEASURED = ("import resource, subprocess, sys\n"
             "code = subprocess.run(sys.argv[1:]).returncode\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(code)\n")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_registry(tmp_path_factory.mktemp("budget") / "registry", {"big-outputs": BIG_OUTPUTS})


@pytest.fixture(scope="module")
def big_run(root):
    (root / "big.yaml").write_text("workflow: big-outputs\nparams: {}\n")
    before = run_names(root)
    proc = snakegate(root, "run", "big.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = new_run(root, before)
    assert (run / "results" / "listing.txt").stat().st_size == BIG_TEXT
    return run


def _sha256(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def test_a_run_with_sixteen_big_plots_and_a_huge_text_gets_a_page_within_budget_that_lists_what_it_left_out(
        root, big_run):
    proc = subprocess.run([sys.executable, "-c", _MEASURED, sys.executable, "-m", "snakegate.cli", "report",
                           big_run.name], cwd=root, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    peak_kib = int(proc.stdout.strip().splitlines()[-1])
    assert peak_kib < MAX_RSS_KIB, f"snakegate report peaked at {peak_kib // 1024} MiB"
    page = (big_run / "report.html").read_text(encoding="utf-8")
    assert len(page.encode()) < PAGE_BYTES, len(page)

    embedded = [base64.b64decode(src) for src in re.findall(r'<img src="data:image/png;base64,([^"]+)"', page)]
    assert embedded and sum(map(len, embedded)) <= IMAGES_BYTES
    assert all(len(data) <= IMAGE_BYTES for data in embedded)
    shown = {hashlib.sha256(data).hexdigest() for data in embedded}
    left_out = PLOTS[len(embedded):] + ["hires"]
    for name in left_out:  # every image not embedded is listed with its path, size and sha256
        path = big_run / "results" / f"{name}.png"
        digest = _sha256(path)
        assert digest not in shown
        assert f"<code>results/{name}.png</code> · {path.stat().st_size:,} bytes · sha256 " \
               f'<code class="sha">{digest}</code>' in page, name
    assert "an image over the 2 MiB cap per image" in page
    assert "the page&#39;s 8 MiB for images were used by the images above" in page
    # the huge text: its first lines, and a word that the rest was not read
    assert "sample 01: ok" in page and "sample 08: ok" in page and "sample 09: ok" not in page
    assert "more lines not read (a text output is read for its first 64 KiB only)" in page


@pytest.mark.parametrize("parent", ["../../etc", "javascript:alert(1)", "/etc/passwd"])
def test_a_parent_run_that_is_not_a_run_id_never_becomes_a_link(root, parent):
    before = run_names(root)
    assert snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml").returncode == 0
    real = new_run(root, before)
    forged = real.parent / f"forged-{hashlib.sha256(parent.encode()).hexdigest()[:8]}"
    shutil.copytree(real, forged, symlinks=True)
    record = json.loads((forged / "run.json").read_text())
    (forged / "run.json").write_text(json.dumps({**record, "run_id": forged.name, "parent_run": parent}))
    proc = snakegate(root, "report", forged.name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (forged / "report.html").read_text(encoding="utf-8")
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert not [h for h in hrefs if "etc" in h or "javascript" in h or "passwd" in h], hrefs
    assert "(not a run id, so not linked)" in page
