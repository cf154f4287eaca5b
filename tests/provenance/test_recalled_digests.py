"""An input is read once by the staging, not again by the records that name it (issue 30): the seal and the
PROV capture recall the digest the staging took while the file is untouched since (snakegate.provenance.known),
and read it again as soon as anything changed it. `seal.check()` (what `snakegate verify` runs) always reads
every byte. Real files; bytes read are the process's own count (/proc/self/io, `rchar`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from snakegate.provenance import known, runfiles, seal
from snakegate.run import stage

SIZE = 4 << 20  # over the 1 MiB below which the PROV capture reads a file whole without asking


def bytes_read() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


@pytest.fixture
def staged(tmp_path) -> tuple[Path, Path, Path, str]:
    """(registry root, run folder, source, sha256): one large input staged as `snakegate run` stages it."""
    source = tmp_path / "data" / "big.bin"
    source.parent.mkdir()
    data = os.urandom(SIZE)
    source.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    stage.stage(run_dir, {"params.big": str(source)}, {"params.big": digest}, {}, {"big": str(source)}, tmp_path)
    return tmp_path, run_dir, source, digest


def _seal_of(run_dir: Path) -> dict:
    import json

    return json.loads((run_dir / seal.SEAL_JSON).read_text())["files"]


def test_the_seal_names_a_staged_input_by_its_staging_digest_without_reading_it(staged):
    root, run_dir, _source, digest = staged
    before = bytes_read()
    seal.seal(run_dir, root)
    assert bytes_read() - before < SIZE // 4
    assert _seal_of(run_dir)["inputs/data/big.bin"] == digest


def test_the_prov_capture_records_the_staged_source_and_copy_without_reading_them(staged):
    _root, run_dir, source, digest = staged
    before = bytes_read()
    assert runfiles.digest_of(str(source)) == (SIZE, digest)
    assert runfiles.digest_of(str(run_dir / "inputs" / "data" / "big.bin")) == (SIZE, digest)
    assert bytes_read() - before < SIZE // 4


def test_a_source_rewritten_after_staging_is_read_again_by_the_prov_capture(staged):
    _root, _run_dir, source, _digest = staged
    other = os.urandom(SIZE)
    st = source.stat()
    source.write_bytes(other)
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and time put back: the change time still moves
    assert runfiles.digest_of(str(source)) == (SIZE, hashlib.sha256(other).hexdigest())


def test_a_staged_copy_replaced_before_the_seal_is_sealed_as_it_now_is(staged):
    root, run_dir, _source, digest = staged
    copy = run_dir / "inputs" / "data" / "big.bin"
    forged = os.urandom(SIZE)
    (copy.parent / "forged").write_bytes(forged)
    os.replace(copy.parent / "forged", copy)
    seal.seal(run_dir, root)
    assert _seal_of(run_dir)["inputs/data/big.bin"] == hashlib.sha256(forged).hexdigest() != digest


def test_checking_a_seal_reads_every_staged_byte_and_finds_a_copy_changed_after_it(staged):
    root, run_dir, _source, _digest = staged
    seal.seal(run_dir, root)
    copy = run_dir / "inputs" / "data" / "big.bin"
    st = copy.stat()
    copy.chmod(0o644)
    with open(copy, "r+b") as fh:
        first = fh.read(1)
        fh.seek(0)
        fh.write(bytes([first[0] ^ 0xFF]))  # a byte that differs: a fixed b"X" is no change when urandom gave one
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    before = bytes_read()
    result = seal.check(run_dir, root)
    assert bytes_read() - before >= SIZE
    assert result.state == "broken"
    assert any(p.startswith("inputs/data/big.bin: changed after the seal") for p in result.problems)


def test_the_export_to_snakemake_stays_under_the_kernels_limit_for_one_environment_string(tmp_path):
    paths = []
    for n in range(2000):  # a cohort: far more inputs than fit in one environment string
        path = tmp_path / f"f{n}"
        path.write_bytes(b"x")
        st = path.stat()
        known.remember(st, st, hashlib.sha256(b"x").hexdigest(), 1)
        paths.append(path)
    value = known.export(paths)
    assert len(f"{known.ENV}={value}") < 128 * 1024
    assert value.startswith("[[") and value.count(str(paths[0].stat().st_ino)) == 1
