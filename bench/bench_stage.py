"""Staging a large input into a run folder (snakegate.run.stage) against `cp` of the same file, same run.

A run copies each gated input into runs/<id>/inputs/ and hashes the bytes it writes, in one read of the
source (a reflink where the filesystem can clone). This times staging a file of `--size-mb` (1 GB by
default) in copy mode and in link mode, interleaved with `cp` of the same file to the same filesystem
(the anchor: what a careful user pays to copy it) and with hashing it alone (what the gate pays), and
counts the bytes each reads from the kernel's own accounting (/proc/self/io `rchar`).

    python bench/bench_stage.py [--size-mb 1024] [--reps 3] [--dir DIR] [--json]

Writes nothing outside a scratch folder under --dir (default: the system temporary folder), removed at the end.
Prints a table; never asserts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from snakegate.run import stage  # noqa: E402


def _rchar() -> int:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _make(path: Path, size_mb: int) -> str:
    """A file of random-looking bytes (a repeated 1 MiB block of random data); its sha256."""
    block = os.urandom(1 << 20)
    digest = hashlib.sha256()
    with open(path, "wb") as fh:
        for _ in range(size_mb):
            fh.write(block)
            digest.update(block)
    return digest.hexdigest()


def _drop_cache(path: Path) -> None:
    """Best effort: ask the kernel to forget the file's pages, so each timing reads from disk alike."""
    try:
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    except (OSError, AttributeError):
        pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the scratch folder goes (the filesystem measured)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="snakegate-bench-stage-", dir=args.dir))
    try:
        root = scratch / "registry"
        (root / "data").mkdir(parents=True)
        source = root / "data" / "big.bin"
        digest = _make(source, args.size_mb)
        times: dict[str, list[float]] = {"cp": [], "hash": [], "stage copy": [], "stage link": []}
        reads: dict[str, int] = {}
        for rep in range(args.reps):
            for name in times:  # interleaved: a drifting machine moves all four alike
                target = scratch / f"{name.replace(' ', '-')}-{rep}"
                _drop_cache(source)
                before, start = _rchar(), time.perf_counter()
                if name == "cp":
                    subprocess.run(["cp", str(source), str(target)], check=True)
                elif name == "hash":
                    with open(source, "rb") as fh:
                        hashlib.file_digest(fh, "sha256")
                else:
                    stage.stage(target, {"params.big": str(source)}, {"params.big": digest}, {}, {},
                                root, name.split()[1])
                times[name].append(time.perf_counter() - start)
                reads[name] = _rchar() - before
                if target.exists():
                    subprocess.run(["chmod", "-R", "u+w", str(target)], check=False)
                    shutil.rmtree(target) if target.is_dir() else target.unlink()
        anchor = statistics.median(times["cp"])
        rows = [{"case": name, "median_s": round(statistics.median(v), 3), "min_s": round(min(v), 3),
                 "max_s": round(max(v), 3), "ratio_to_cp": round(statistics.median(v) / anchor, 2),
                 "bytes_read_by_python": reads[name] if name != "cp" else None}
                for name, v in times.items()]
        result = {"size_mb": args.size_mb, "reps": args.reps, "load": os.getloadavg(), "rows": rows,
                  "filesystem": subprocess.run(["stat", "-f", "-c", "%T", str(scratch)], capture_output=True,
                                               text=True).stdout.strip()}
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            print(f"staging a {args.size_mb} MB input ({result['filesystem']}, load {result['load'][0]:.1f}), "
                  f"median of {args.reps}:")
            print("| case | median | min | max | vs cp | read by the process |")
            print("|---|---:|---:|---:|---:|---:|")
            for r in rows:
                read = "–" if r["bytes_read_by_python"] is None else f"{r['bytes_read_by_python'] / 2**20:.0f} MiB"
                print(f"| {r['case']} | {r['median_s']:.2f} s | {r['min_s']:.2f} s | {r['max_s']:.2f} s | "
                      f"{r['ratio_to_cp']:.2f} | {read} |")
        return 0
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(scratch)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
