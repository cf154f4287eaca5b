"""Git facts that pin what ran: the registry commit, a dirty work tree, the workflow folder's tree SHA.

Read with GitPython; nothing is written. Outside a repository (or without a
git executable) the answer says so ("no git") instead of failing: a run on a
copied folder still gets a provenance record.

"dirty" means tracked files differ from HEAD (untracked files such as runs/
or local data do not count); the workflow folder is dirty when anything under
it, untracked files included, differs from HEAD, because then its tree SHA
does not describe what ran.
"""

from __future__ import annotations

import getpass
import os
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


def _repo(path: Path):
    try:
        import git  # GitPython raises ImportError when no git executable is found
    except ImportError as exc:
        return None, f"no git: {exc}"
    try:
        return git.Repo(path, search_parent_directories=True), None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None, "no git: the registry is not inside a git repository"
    except Exception as exc:  # noqa: BLE001 - an unreadable repository is reported, never fatal
        return None, f"no git: {type(exc).__name__}: {exc}"


def git_state(registry_root: Path, workflow_folder: Path | None = None) -> GitState:
    repo, reason = _repo(Path(registry_root))
    if repo is None:
        return GitState(available=False, reason=reason)
    import git

    state = GitState(available=True)
    try:
        state.commit = repo.head.commit.hexsha
    except (ValueError, git.GitCommandError):
        state.reason = "no commit yet"
    try:
        state.branch = None if repo.head.is_detached else repo.active_branch.name
    except (TypeError, ValueError, git.GitCommandError):
        state.branch = None
    try:
        state.dirty = bool(repo.git.status("--porcelain", "--untracked-files=no").strip())
    except git.GitCommandError:
        state.dirty = None
    if workflow_folder is not None and repo.working_tree_dir:
        try:
            rel = Path(os.path.relpath(Path(workflow_folder).resolve(), Path(repo.working_tree_dir).resolve()))
        except ValueError:
            rel = None
        if rel is not None and not rel.as_posix().startswith(".."):
            state.workflow_path = rel.as_posix()
            if state.commit:
                try:
                    state.workflow_tree = repo.git.rev_parse(f"HEAD:{state.workflow_path}")
                except git.GitCommandError:
                    state.workflow_tree = None  # not committed
            try:
                state.workflow_dirty = bool(repo.git.status("--porcelain", "--untracked-files=all", "--",
                                                            state.workflow_path).strip())
            except git.GitCommandError:
                state.workflow_dirty = None
    return state


@dataclass
class Person:
    name: str
    email: str | None
    source: str  # "git config" | "os user"


def current_person(registry_root: Path) -> Person:
    """Who ran it: git config user.name/email (repository, then global), else the OS user."""
    name = email = None
    try:
        import git
        g = git.Git(str(registry_root))
        for key in ("user.name", "user.email"):
            try:
                value = g.config("--get", key).strip()
            except git.GitCommandError:
                value = ""
            if key == "user.name":
                name = value or None
            else:
                email = value or None
    except Exception:  # noqa: BLE001 - no git at all: fall back to the OS user
        name = email = None
    if name:
        return Person(name=name, email=email, source="git config")
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (containers): numeric uid
        user = f"uid-{os.getuid()}"
    return Person(name=user, email=email, source="os user")
