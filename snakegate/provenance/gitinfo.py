"""Git facts that pin what ran: the registry commit, a dirty work tree, the workflow folder's tree SHA.

Read with the `git` executable itself, four commands at most (GitPython's import alone cost
each run 0.2 s of CPU, twice: in the front end and in Snakemake's process); nothing is
written. Outside a repository (or without a git executable) the answer says so ("no git")
instead of failing: a run on a copied folder still gets a provenance record.

"dirty" means tracked files differ from HEAD (untracked files such as runs/
or local data do not count); the workflow folder is dirty when anything under
it, untracked files included, differs from HEAD, because then its tree SHA
does not describe what ran.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class GitState:
    available: bool
    reason: str | None = None  # why there is no git information ("no git: ...")
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    workflow_path: str | None = None  # the workflow folder relative to the repository root
    workflow_tree: str | None = None  # `git rev-parse HEAD:<workflow_path>`
    workflow_dirty: bool | None = None


_TIMEOUT_S = 60  # a git that hangs (a stale lock on a network filesystem) costs the record its git facts, not the run


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess | str:
    """One `git` command run in `cwd`: its completed process, or why git could not be run at all."""
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], stdin=subprocess.DEVNULL, capture_output=True,
                              encoding="utf-8", errors="replace", timeout=_TIMEOUT_S, check=False)
    except FileNotFoundError:
        return "no git: no git executable on PATH"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no git: {type(exc).__name__}: {exc}"


def git_state(registry_root: Path, workflow_folder: Path | None = None) -> GitState:
    # one `git status` says the commit, the branch and whether tracked files differ from HEAD
    status = _git(Path(registry_root), "status", "--porcelain=v2", "--branch", "--untracked-files=no")
    if isinstance(status, str):
        return GitState(available=False, reason=status)
    if status.returncode != 0:
        said = (status.stderr.strip().splitlines() or ["git status failed"])[-1]
        if "not a git repository" in said:
            return GitState(available=False, reason="no git: the registry is not inside a git repository")
        return GitState(available=False, reason=f"no git: {said}")
    state = GitState(available=True)
    headers = dict(line[2:].split(" ", 1) for line in status.stdout.splitlines()
                   if line.startswith("# ") and " " in line[2:])
    oid, head = headers.get("branch.oid"), headers.get("branch.head")
    state.commit = oid if oid and oid != "(initial)" else None
    if state.commit is None:
        state.reason = "no commit yet"
    state.branch = head if head and head != "(detached)" else None
    state.dirty = any(line and not line.startswith("#") for line in status.stdout.splitlines())
    if workflow_folder is None:
        return state
    top = _git(Path(registry_root), "rev-parse", "--show-toplevel")
    if isinstance(top, str) or top.returncode != 0 or not top.stdout.strip():
        return state
    top_dir = Path(top.stdout.strip())
    try:
        rel = Path(os.path.relpath(Path(workflow_folder).resolve(), top_dir.resolve()))
    except ValueError:
        return state
    if rel.as_posix().startswith(".."):
        return state
    state.workflow_path = rel.as_posix()
    if state.commit:
        tree = _git(top_dir, "rev-parse", "--verify", "--quiet", f"HEAD:{state.workflow_path}")
        if not isinstance(tree, str) and tree.returncode == 0:
            state.workflow_tree = tree.stdout.strip() or None  # else: not committed
    changed = _git(top_dir, "status", "--porcelain", "--untracked-files=all", "--", state.workflow_path)
    if not isinstance(changed, str) and changed.returncode == 0:
        state.workflow_dirty = bool(changed.stdout.strip())
    return state


@dataclass
class Person:
    name: str
    email: str | None
    source: str  # "git config" | "os user"


def current_person(registry_root: Path) -> Person:
    """Who ran it: git config user.name/email (repository, then global; the last value of each, as
    `git config --get` answers), else the OS user. One `git config` for both."""
    values: dict[str, str] = {}
    found = _git(Path(registry_root), "config", "-z", "--get-regexp", r"^user\.(name|email)$")
    if not isinstance(found, str) and found.returncode == 0:
        for item in found.stdout.split("\0"):
            key, _, value = item.partition("\n")
            if key in ("user.name", "user.email"):
                values[key] = value.strip()
    name, email = values.get("user.name") or None, values.get("user.email") or None
    if name:
        return Person(name=name, email=email, source="git config")
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (containers): numeric uid
        user = f"uid-{os.getuid()}"
    return Person(name=user, email=email, source="os user")
