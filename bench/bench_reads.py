"""Full reads of one large input per `snakegate run` (issue 30: hash once, at staging).

A throw-away registry runs bench/blob: `--jobs` jobs (default 1) that each write the input's size without
reading a byte of it, so every byte read from the input during the run is snakegate's own. The run goes under
`strace -f -y` (every process: the front end, Snakemake, the job), and each read(2)-family call on the
source file or on its staged copy (also while the copy is still in the front end's scratch folder, before it
moves into the run folder) is summed; the count of full reads is those bytes over the file's size,
per file and per process (pid -> its command). Plain `snakemake` on the same Snakefile and input reads it 0
times outside the job (the anchor). The input is made once, `--size-mb` (default 256; the issue's case is
1024), of random bytes.

    python bench/bench_reads.py [--size-mb 256] [--jobs 1] [--mode copy|link] [--json]

Needs strace. Writes nothing outside a scratch folder, removed at the end. Prints a table; never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from common import REPO, SNAKEGATE, SNAKEMAKE, Scratch, load_average

BLOB = Path(__file__).resolve().parent / "blob"
READ_CALLS = "read,pread64,readv,preadv,preadv2,sendfile,copy_file_range"
# `1234  read(5</path/of/file>, ..., 1048576) = 1048576`; sendfile/copy_file_range: the first fd is the target
_CALL = re.compile(r"^(\d+)\s+(\w+)\((\d+)<([^>]*)>(?:, (\d+)<([^>]*)>)?.*\)\s+=\s+(\d+)")
_EXEC = re.compile(r'^(\d+)\s+execve\("([^"]*)", \[(.*?)\]')
_UNFINISHED = re.compile(r"^(\d+)\s+(\w+)\((\d+)<([^>]*)>(?:, (\d+)<([^>]*)>)?.*<unfinished \.\.\.>")
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>.*\)\s+=\s+(\d+)")


def make_registry(parent: Path, size_mb: int, mode: str) -> tuple[Path, Path]:
    root = parent / "registry"
    (root / "workflows").mkdir(parents=True)
    shutil.copy2(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(BLOB, root / "workflows" / "blob", ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "snakegate.toml").write_text(f'[run]\nstage_inputs = "{mode}"\n')
    blob = root / "data" / "blob" / "blob.pkl"
    blob.parent.mkdir(parents=True)
    block = os.urandom(1 << 20)
    with open(blob, "wb") as fh:
        for _ in range(size_mb):
            fh.write(block)
    return root, blob


def traced(cmd: list[str], cwd: Path, trace: Path) -> int:
    full = ["strace", "-f", "-y", "-qq", "-s", "48", "-e", f"trace={READ_CALLS},execve", "-o", str(trace), *cmd]
    return subprocess.run(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT).returncode


def count_reads(trace: Path, watched: dict[str, str], staging: str | None = None) -> dict:
    """{label: {"bytes": n, "by": {command: bytes}}} for each watched path (resolved path -> label). `staging`
    (`<runs>/.staging-`): a path under one of the front end's scratch folders counts as the watched path it
    moves to, `<run folder>/<the rest after the scratch folder's name>` (a copy is hashed before it moves)."""
    moved_to = {path.rsplit("/inputs/", 1)[-1]: label for path, label in watched.items() if "/inputs/" in path}
    commands: dict[str, str] = {}
    pending: dict[str, tuple] = {}  # pid -> the call strace printed as <unfinished ...>
    out: dict[str, dict] = {label: {"bytes": 0, "by": defaultdict(int)} for label in set(watched.values())}
    with open(trace, errors="replace") as fh:
        for line in fh:
            if m := _EXEC.match(line):
                args = [a.strip('"') for a in m.group(3).split(", ")]
                commands[m.group(1)] = " ".join([Path(args[0]).name, *args[1:4]])
                continue
            if m := _UNFINISHED.match(line):
                pending[m.group(1)] = m.groups()[1:]
                continue
            if m := _RESUMED.match(line):
                if m.group(1) not in pending:
                    continue
                call, _fd, path, _fd2, path2 = pending.pop(m.group(1))
                pid, n = m.group(1), m.group(3)
            elif m := _CALL.match(line):
                pid, call, _fd, path, _fd2, path2, n = m.groups()
            else:
                continue
            source = path2 if call in ("sendfile", "copy_file_range") else path
            label = watched.get(source)
            if label is None and staging and source.startswith(staging) and "/inputs/" in source:
                label = moved_to.get(source.split("/inputs/", 1)[1])
            if label is None:
                continue
            out[label]["bytes"] += int(n)
            out[label]["by"][commands.get(pid, f"pid {pid}")] += int(n)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--mode", choices=("copy", "link"), default="copy")
    ap.add_argument("--jobs", type=int, default=1, help="jobs that each take the input (default 1)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if shutil.which("strace") is None:
        print("bench_reads needs strace (apt-get install strace)", file=sys.stderr)
        return 2
    scratch = Scratch()
    try:
        root, blob = make_registry(scratch.fresh("reads"), args.size_mb, args.mode)
        size = blob.stat().st_size
        load = load_average()
        config = root / "run.yaml"
        config.write_text(f"workflow: blob\nparams:\n  blob: {blob.relative_to(root)}\n  n_jobs: {args.jobs}\n")
        trace = scratch.root / "snakegate.trace"
        code = traced([SNAKEGATE, "--registry", str(root), "run", str(config), "--cores", "1"], root, trace)
        runs = sorted((root / "runs").iterdir())
        staged = {}
        if runs:
            inputs = json.loads((runs[-1] / "inputs.json").read_text())["inputs"]
            staged = {str((runs[-1] / e["path"]).resolve()): "staged copy" for e in inputs.values()}
        ours = count_reads(trace, {str(blob.resolve()): "source", **staged},
                           staging=str((root / "runs").resolve()) + "/.staging-")
        plain_dir = scratch.fresh("plain")
        plain_trace = scratch.root / "plain.trace"
        plain_code = traced([SNAKEMAKE, "--snakefile", str(root / "workflows" / "blob" / "Snakefile"), "--cores", "1",
                             "--directory", str(plain_dir), "--config", f"blob={blob}", f"n_jobs={args.jobs}"], plain_dir, plain_trace)
        plain = count_reads(plain_trace, {str(blob.resolve()): "source"})
        result = {"size_mb": args.size_mb, "mode": args.mode, "jobs": args.jobs, "load": load, "exit_code": code,
                  "plain_exit_code": plain_code,
                  "snakegate": {k: {"full_reads": round(v["bytes"] / size, 2),
                                    "by": {c: round(b / size, 2) for c, b in v["by"].items()}}
                                for k, v in ours.items()},
                  "snakemake": {"full_reads": round(plain["source"]["bytes"] / size, 2)}}
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            print(f"input {args.size_mb} MB, {args.jobs} job(s) taking it, staging {args.mode}, load {load:.1f}; "
                  f"exit {code} (plain {plain_code})")
            for label, v in result["snakegate"].items():
                print(f"  snakegate run, {label:<12} {v['full_reads']:5.2f} full reads")
                for command, n in sorted(v["by"].items()):
                    print(f"      {n:5.2f}  {command[:100]}")
            print(f"  plain snakemake, source    {result['snakemake']['full_reads']:5.2f} full reads")
        return 0
    finally:
        scratch.close()


if __name__ == "__main__":
    sys.exit(main())
