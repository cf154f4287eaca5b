"""A digest is reused only while its file is provably untouched (snakegate.provenance.known): the staging's copy is
recalled without being read again, and any change to a file after it was hashed (rewritten with its size and
time put back, replaced by a rename, its mode changed) makes the guard read it again. Real files."""
import hashlib
import json
import os
import subprocess
import sys

from snakegate.provenance import known
from snakegate.run import stage

BYTES = b"id,value\n1,0.5\n2,1.5\n"


def staged_copy(tmp_path):
    source = tmp_path / "data" / "t.csv"
    source.parent.mkdir()
    source.write_bytes(BYTES)
    os.utime(source, (1_600_000_000, 1_600_000_000))
    digest = hashlib.sha256(BYTES).hexdigest()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    stage.stage(run_dir, {"params.t": str(source)}, {"params.t": digest}, {}, {"t": str(source)}, tmp_path)
    return run_dir / "inputs" / "data" / "t.csv", digest


def test_the_staged_copy_is_recalled_with_the_digest_of_the_bytes_written(tmp_path):
    copy, digest = staged_copy(tmp_path)
    assert known.recall(copy) == (digest, len(BYTES))


def test_a_copy_rewritten_with_its_size_and_time_put_back_is_not_recalled(tmp_path):
    copy, _ = staged_copy(tmp_path)
    st = copy.stat()
    os.chmod(copy, 0o644)
    copy.write_bytes(b"id,value\n1,9.9\n2,1.5\n")  # same size
    os.chmod(copy, 0o444)
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert copy.stat().st_size == st.st_size and copy.stat().st_mtime_ns == st.st_mtime_ns
    assert known.recall(copy) is None


def test_a_copy_replaced_by_a_rename_is_not_recalled(tmp_path):
    copy, _ = staged_copy(tmp_path)
    other = tmp_path / "other.csv"
    other.write_bytes(BYTES.replace(b"0.5", b"7.5"))
    os.replace(other, copy)
    assert known.recall(copy) is None


def test_a_chmod_alone_is_enough_to_hash_again(tmp_path):
    copy, _ = staged_copy(tmp_path)
    os.chmod(copy, 0o644)
    assert known.recall(copy) is None


def test_a_process_started_with_the_export_recalls_without_reading(tmp_path):
    copy, digest = staged_copy(tmp_path)
    env = {**os.environ, known.ENV: known.export([copy])}
    code = "import sys; from snakegate.provenance import known; print(known.recall(sys.argv[1]))"
    out = subprocess.run([sys.executable, "-", str(copy)], input=code, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str((digest, len(BYTES))), out.stderr


def test_a_malformed_export_is_ignored_and_only_costs_a_read(tmp_path):
    copy, _ = staged_copy(tmp_path)
    for value in ("not json", json.dumps([["x"]]), json.dumps({"a": 1})):
        env = {**os.environ, known.ENV: value}
        code = "import sys; from snakegate.provenance import known; print(known.recall(sys.argv[1]))"
        out = subprocess.run([sys.executable, "-", str(copy)], input=code, env=env, capture_output=True, text=True)
        assert out.stdout.strip() == "None" and out.returncode == 0, out.stderr
