"""Start and stop a real one-node Slurm cluster (munged, slurmctld, slurmd) for the integration tests.

    python tests/slurm_cluster.py up DIR     # start; prints `export SLURM_CONF=DIR/slurm.conf`
    python tests/slurm_cluster.py down DIR   # stop every daemon `up` started, by PID

Everything lives in DIR: a munge key made there (when missing) and munged's socket, a slurm.conf
written from `slurmd -C` (SlurmUser=root, proctrack/linuxproc, task/none, select/cons_tres with
CR_Core_Memory and DefMemPerCPU, no accounting, one default partition), state, spool, logs and the
daemons' PIDs. The one thing outside DIR is a symlink /etc/slurm/slurm.conf -> DIR/slurm.conf,
because a job step's `srun` finds its configuration only there (the Slurm executor plugin's job
step drops SLURM_CONF from the environment); `up` refuses to replace a slurm.conf it did not make
and `down` removes the link. The ports are free ones picked at start. It needs root (slurmd runs
jobs as their users) and the Debian packages `slurmctld slurmd slurm-client munge`; `why_not()`
says in one sentence why it cannot start here.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "scontrol")
PARTITION = "snakegate"
STATE_FILE = "daemons.json"
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")


def why_not() -> str | None:
    """None when a cluster can be started here; else the reason, for a skip message."""
    if os.geteuid() != 0:
        return "starting Slurm needs root (slurmd runs jobs as their users); run the tests as root, as .ci/run does"
    missing = [p for p in DAEMONS + CLIENTS if shutil.which(p) is None and not Path("/usr/sbin", p).exists()]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} missing): "
                "apt-get install --no-install-recommends slurmctld slurmd slurm-client munge")
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "there is no `munge` user (the munge package creates it)"
    if os.path.lexists(SYSTEM_CONF) and not _ours(SYSTEM_CONF):
        return f"{SYSTEM_CONF} belongs to a Slurm installation here; the test cluster never replaces it"
    return None


def why_not_test() -> str | None:
    """why_not(), and what the Slurm tests need besides: coreutils' timeout (every run is bounded by it) and
    the Slurm executor plugin."""
    reason = why_not()
    if reason:
        return f"no Slurm here: {reason}"
    if shutil.which("timeout") is None:
        return "no Slurm tests without coreutils' timeout (every run is bounded by it)"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return 'the Slurm executor plugin is not installed: pip install -e ".[test]"'
    return None


def _ours(link: Path) -> bool:
    """Is `link` a symlink a test cluster made (to a slurm.conf beside a daemons.json)?"""
    return link.is_symlink() and Path(os.readlink(link)).name == "slurm.conf"


def _live_cluster(link: Path) -> Path | None:
    """The folder of another test cluster whose daemons still run and own `link`, if any."""
    if not _ours(link):
        return None
    folder = Path(os.readlink(link)).parent
    try:
        pids = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return folder if any(_alive(p) for p in pids.values()) else None


def _exe(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    """A running cluster: its folder, the environment clients need, the daemons' PIDs."""

    dir: Path
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.dir / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """os.environ plus SLURM_CONF, for every client (sbatch, squeue, Snakemake and its plugin)."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def run(self, *argv: str, check: bool = True) -> str:
        out = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30)
        if check and out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
        return out.stdout

    def job_ids(self) -> list[int]:
        """Every job id the controller knows (pending, running and recently finished)."""
        text = self.run("squeue", "--states=all", "--noheader", "--format=%i")
        return sorted(int(x) for x in text.split() if x.isdigit())

    def active_job_ids(self) -> list[int]:
        """Jobs still pending, running or completing."""
        text = self.run("squeue", "--noheader", "--format=%i", "--states=PENDING,RUNNING,COMPLETING,CONFIGURING")
        return sorted(int(x) for x in text.split() if x.isdigit())

    def jobs(self) -> list[dict]:
        """id, name, state, node, comment (Snakemake's rule_<rule>), CPUs, memory and time limit of every
        job the controller knows."""
        text = self.run("squeue", "--states=all", "--noheader", "--format=%i|%j|%T|%N|%k|%C|%m|%l")
        rows = []
        for line in text.splitlines():
            parts = line.split("|")
            if len(parts) == 8 and parts[0].isdigit():
                rows.append({"id": int(parts[0]), "name": parts[1], "state": parts[2], "node": parts[3],
                             "comment": parts[4], "cpus": parts[5], "memory": parts[6], "time_limit": parts[7]})
        return sorted(rows, key=lambda r: r["id"])

    def node_state(self) -> str:
        return self.run("sinfo", "--noheader", "--format=%t", check=False).strip()

    def stop(self) -> None:
        stop(self.dir)


def _conf_text(d: Path, node_line: str, ports: tuple[int, int]) -> str:
    # `slurmd -C` prints this machine's node line; keep its hardware fields, leave memory for the OS
    fields = dict(kv.split("=", 1) for kv in node_line.split() if "=" in kv)
    node = fields.pop("NodeName")
    fields.pop("UpTime", None)
    memory = int(fields.get("RealMemory", "2000"))
    fields["RealMemory"] = str(max(memory - 512, 500))
    hw = " ".join(f"{k}={v}" for k, v in fields.items())
    return "\n".join([
        "# written by tests/slurm_cluster.py: a one-node cluster for snakegate's integration tests",
        "ClusterName=snakegate",
        f"SlurmctldHost={node}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={d}/munge/munge.socket",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        f"StateSaveLocation={d}/state",
        f"SlurmdSpoolDir={d}/spool",
        f"SlurmctldPidFile={d}/slurmctld.pid",
        f"SlurmdPidFile={d}/slurmd.pid",
        f"SlurmctldLogFile={d}/slurmctld.log",
        f"SlurmdLogFile={d}/slurmd.log",
        f"PlugStackConfig={d}/plugstack.conf",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "DefMemPerCPU=500",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        # finished jobs stay visible to squeue this long: the status check without accounting reads them there
        "MinJobAge=300",
        "SlurmdTimeout=60",
        "InactiveLimit=0",
        "KillWait=5",
        f"NodeName={node} NodeAddr=127.0.0.1 {hw} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def _spawn(name: str, argv: list[str], d: Path, **kwargs) -> int:
    log = open(d / f"{name}.out", "ab")  # noqa: SIM115 - handed to the daemon
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, **kwargs)
    log.close()
    return proc.pid


def _record(d: Path, pids: dict[str, int]) -> None:
    (d / STATE_FILE).write_text(json.dumps(pids, indent=1) + "\n", encoding="utf-8")


def _wait(what: str, ok, timeout: float, d: Path, pid: int | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ok():
            return
        if pid is not None and not _alive(pid):
            timeout = 0  # it died: say so now, with its log
            break
        time.sleep(0.2)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(d.glob("*.log"))
                     + sorted(d.glob("*.out")) + sorted((d / "munge").glob("*.log")))
    state = "exited" if timeout == 0 else f"not ready after {timeout:.0f} s"
    raise RuntimeError(f"Slurm did not come up: {what} {state}\n{logs}")


def up(d: Path | None = None, timeout: float = 60.0, wait_for_other_s: float = 900.0) -> Cluster:
    """Start munged, slurmctld and slurmd in `d` (made if missing; default a new folder in the system's
    temporary folder, since munged must reach it as the munge user) and wait until the node is idle.
    One test cluster runs at a time (they share /etc/slurm/slurm.conf): another one's end is waited for."""
    reason = why_not()
    if reason:
        raise RuntimeError(reason)
    end = time.monotonic() + wait_for_other_s
    while (other := _live_cluster(SYSTEM_CONF)) is not None and other != (Path(d).resolve() if d else None):
        if time.monotonic() > end:
            raise RuntimeError(f"another test cluster has been running in {other} for over {wait_for_other_s:.0f} s; "
                               f"stop it with: python tests/slurm_cluster.py down {other}")
        time.sleep(2)
    made = d is None
    d = Path(d or tempfile.mkdtemp(prefix="snakegate-slurm-")).resolve()
    blocked = next((p for p in d.parents if not os.stat(p).st_mode & 0o001), None)
    if blocked is not None:
        raise RuntimeError(f"{d} is inside {blocked}, which the munge user cannot enter; use a folder it can")
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o755)  # the munge user must reach its folder inside
    cluster = Cluster(d)
    try:
        _start(cluster)
        _wait("the node", lambda: cluster.node_state() == "idle", timeout, d)
    except BaseException:
        stop(d)
        if made:
            shutil.rmtree(d, ignore_errors=True)
        raise
    return cluster


def _start(cluster: Cluster) -> None:
    d = cluster.dir
    munge = pwd.getpwnam("munge")
    mdir = d / "munge"
    mdir.mkdir(exist_ok=True)
    os.chown(mdir, munge.pw_uid, munge.pw_gid)
    os.chmod(mdir, 0o755)  # munged wants its socket's folder reachable by all (the key stays 0400)
    key = mdir / "munge.key"
    if not key.exists():  # a key of its own: a site's /etc/munge/munge.key is never used or changed
        key.write_bytes(os.urandom(1024))
    os.chown(key, munge.pw_uid, munge.pw_gid)
    os.chmod(key, 0o400)
    for sub in ("state", "spool"):
        (d / sub).mkdir(exist_ok=True)
    node_line = subprocess.run([_exe("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
    node_line = next(line for line in node_line.splitlines() if line.startswith("NodeName="))
    cluster.conf.write_text(_conf_text(d, node_line, (_free_port(), _free_port())), encoding="utf-8")
    (d / "plugstack.conf").write_text("", encoding="utf-8")
    SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(SYSTEM_CONF):
        SYSTEM_CONF.unlink()  # ours (why_not checked), from a cluster that is gone
    SYSTEM_CONF.symlink_to(cluster.conf)

    socket_path = mdir / "munge.socket"
    cluster.pids["munged"] = _spawn("munged", [
        _exe("munged"), "--foreground", f"--socket={socket_path}", f"--key-file={key}",
        f"--pid-file={mdir}/munged.pid", f"--log-file={mdir}/munged.log", f"--seed-file={mdir}/munged.seed",
    ], d, user=munge.pw_uid, group=munge.pw_gid, cwd=mdir)
    _record(d, cluster.pids)
    _wait("munged", socket_path.exists, 20, d, cluster.pids["munged"])
    env = cluster.env
    cluster.pids["slurmctld"] = _spawn("slurmctld", [_exe("slurmctld"), "-D", "-i", "-f", str(cluster.conf)], d,
                                       env=env)
    _record(d, cluster.pids)
    _wait("slurmctld", lambda: subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True,
                                              timeout=10).stdout.count("UP") > 0, 30, d,
          cluster.pids["slurmctld"])
    cluster.pids["slurmd"] = _spawn("slurmd", [_exe("slurmd"), "-D", "-f", str(cluster.conf)], d, env=env)
    _record(d, cluster.pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie of ours counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def stop(d: Path) -> None:
    """Cancel every job, then stop the daemons `up` recorded in `d`, by PID (SIGTERM, then SIGKILL)."""
    d = Path(d).resolve()
    try:
        pids = json.loads((d / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if pids.get("slurmctld") and _alive(pids["slurmctld"]):
        subprocess.run(["scancel", "--full", "--quiet", "--partition", PARTITION], env=Cluster(d).env,
                       capture_output=True, timeout=30)
    for name in ("slurmd", "slurmctld", "munged"):
        pid = pids.get(name)
        if not pid or not _alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < end:
            _reap(pid)
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        _reap(pid)
    (d / STATE_FILE).unlink(missing_ok=True)
    if _ours(SYSTEM_CONF) and Path(os.readlink(SYSTEM_CONF)).parent == d:
        SYSTEM_CONF.unlink()


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("up", "down"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    if argv[0] == "down":
        stop(Path(argv[1]))
        return 0
    try:
        cluster = up(Path(argv[1]))
    except RuntimeError as exc:
        print(f"slurm_cluster: {exc}", file=sys.stderr)
        return 1
    print(f"export SLURM_CONF={cluster.conf}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
