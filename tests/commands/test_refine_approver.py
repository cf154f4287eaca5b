"""`snakegate refine` records its approver as every other door names them: the name remembered for the
registry (the chat's ctrl+t), not the machine's login name."""

from __future__ import annotations

from snakegate.commands.refine_cmds import _user
from snakegate.registry.approver import remember


def test_refine_names_the_approver_remembered_for_the_registry(tmp_path):
    remember(tmp_path, "Grace Hopper")
    assert _user(tmp_path) == "Grace Hopper"
