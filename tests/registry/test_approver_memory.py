"""Who approves runs in a registry: --user, else the name the person gave once (remembered in .snakegate/),
else the machine's git name or login name, which the chat asks about before the first run."""

from __future__ import annotations

import os
import subprocess

import pytest

from snakegate.errors import UserError
from snakegate.registry import approver


def _git_registry(tmp_path, name="Ada Tester"):
    root = tmp_path / "registry"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "user.name", name], check=True)
    return root


def test_only_the_machines_git_name_is_an_approver_the_chat_asks_about(tmp_path):
    who = approver.resolve(_git_registry(tmp_path))
    assert (who.name, who.source, who.machine_only) == ("Ada Tester", "git", True)


def test_a_remembered_name_is_used_and_not_asked_again(tmp_path):
    root = _git_registry(tmp_path)
    approver.remember(root, "  Ada   Lovelace ")
    who = approver.resolve(root)
    assert (who.name, who.machine_only) == ("Ada Lovelace", False)
    assert oct((root / ".snakegate" / "approver.json").stat().st_mode & 0o777) == "0o600"


def test_user_option_wins_over_the_remembered_name(tmp_path):
    root = _git_registry(tmp_path)
    approver.remember(root, "Ada Lovelace")
    assert approver.resolve(root, "Grace Hopper") == approver.Approver("Grace Hopper", "given")


@pytest.mark.parametrize("content", ['{"name": 7}', "not json", '["Ada"]', '{"name": "\\u0000\\u001b"}',
                                     '{"name": "' + "x" * 5000 + '"}'])
def test_a_damaged_remembered_name_is_asked_again_not_a_crash(tmp_path, content):
    root = _git_registry(tmp_path)
    (root / ".snakegate").mkdir()
    (root / ".snakegate" / "approver.json").write_text(content)
    assert approver.resolve(root).source == "git"


def test_a_symlinked_remembered_name_is_not_read(tmp_path):
    root = _git_registry(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"name": "Mallory"}')
    (root / ".snakegate").mkdir()
    os.symlink(elsewhere, root / ".snakegate" / "approver.json")
    assert approver.resolve(root).name == "Ada Tester"


def test_an_empty_name_is_refused_with_what_to_type(tmp_path):
    with pytest.raises(UserError, match="must be a name"):
        approver.remember(_git_registry(tmp_path), " \t ")


def test_control_characters_never_reach_the_recorded_name():
    assert approver.clean_name("Ada\x1b[31m Tester\n") == "Ada[31m Tester"
