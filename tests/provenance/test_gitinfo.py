"""The git facts a run's record pins (snakegate.provenance.gitinfo), read with the git executable: the commit,
the branch, a dirty work tree, the workflow folder's tree and whether it differs from HEAD, and who ran it.
Real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from snakegate.provenance import gitinfo


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "registry"
    (root / "workflows" / "w").mkdir(parents=True)
    (root / "workflows" / "w" / "Snakefile").write_text("rule all:\n    output: 'x'\n")
    (root / "README.md").write_text("registry\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=A", "-c", "user.email=a@example.org", "commit", "-qm", "first")
    return root


def test_a_clean_checkout_names_its_commit_branch_and_the_workflow_tree(repo):
    state = gitinfo.git_state(repo, repo / "workflows" / "w")
    assert state.available and state.reason is None
    assert state.commit == git(repo, "rev-parse", "HEAD") and state.branch == "main"
    assert state.dirty is False and state.workflow_dirty is False
    assert state.workflow_path == "workflows/w"
    assert state.workflow_tree == git(repo, "rev-parse", "HEAD:workflows/w")


def test_an_edited_tracked_file_makes_the_tree_dirty_but_not_an_untouched_workflow(repo):
    (repo / "README.md").write_text("edited\n")
    (repo / "runs").mkdir()
    (repo / "runs" / "run.json").write_text("{}")  # untracked elsewhere: not dirt
    state = gitinfo.git_state(repo, repo / "workflows" / "w")
    assert state.dirty is True and state.workflow_dirty is False


def test_an_untracked_file_in_the_workflow_folder_makes_only_the_workflow_dirty(repo):
    (repo / "workflows" / "w" / "helper.py").write_text("")
    state = gitinfo.git_state(repo, repo / "workflows" / "w")
    assert state.dirty is False and state.workflow_dirty is True


def test_an_uncommitted_workflow_folder_has_no_tree(repo):
    (repo / "workflows" / "new").mkdir()
    (repo / "workflows" / "new" / "Snakefile").write_text("")
    state = gitinfo.git_state(repo, repo / "workflows" / "new")
    assert state.workflow_path == "workflows/new" and state.workflow_tree is None and state.workflow_dirty is True


def test_a_detached_head_has_a_commit_and_no_branch(repo):
    git(repo, "checkout", "-q", "--detach")
    state = gitinfo.git_state(repo / "workflows", repo / "workflows" / "w")  # from a folder inside the repository
    assert state.commit == git(repo, "rev-parse", "HEAD") and state.branch is None
    assert state.workflow_path == "workflows/w"


def test_a_repository_without_a_commit_says_so(tmp_path):
    git(tmp_path, "init", "-q", "-b", "trunk")
    state = gitinfo.git_state(tmp_path)
    assert state.available and state.commit is None and state.reason == "no commit yet" and state.branch == "trunk"


def test_a_workflow_outside_the_repository_gets_no_path(repo, tmp_path):
    state = gitinfo.git_state(repo, tmp_path)
    assert state.available and state.workflow_path is None and state.workflow_tree is None


def test_outside_a_repository_the_answer_is_no_git(tmp_path):
    state = gitinfo.git_state(tmp_path, tmp_path)
    assert not state.available and state.reason == "no git: the registry is not inside a git repository"


def test_the_person_is_the_repositorys_git_config_user(repo):
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.org")
    person = gitinfo.current_person(repo)
    assert (person.name, person.email, person.source) == ("Ada Lovelace", "ada@example.org", "git config")
