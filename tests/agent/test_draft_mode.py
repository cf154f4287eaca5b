"""A draft that holds a secret is owner-only from its first byte: it is created 0600 under a temp name of its own and
renamed into place, never written readable and chmod-ed afterwards.

Real conversation (scripted OpenAI-compatible server, real OpenAIBackend, real gate) writing a real draft. What the
file's mode is between writing and renaming is read by a Python audit hook: at the `os.rename` event (which
`os.replace` raises just before the rename) the hook stats the temp file, which by then holds the whole secret.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from openai_server import call
from snakegate.agent.events import DraftReady
from snakegate.agent.redact import PLACEHOLDER

SECRET = "hunter2-s3cret-0042"
_seen: list | None = None  # while a test watches: (event, path, mode) for every rename and chmod of a draft


def _hook(event: str, args: tuple) -> None:
    if _seen is None or event not in ("os.rename", "os.chmod"):
        return
    try:
        path = Path(os.fsdecode(args[0]))
        if path.parent.name != "drafts":
            return
        mode = os.stat(path).st_mode & 0o777 if event == "os.rename" else args[1]
        _seen.append((event, path.name, mode))
    except Exception:  # noqa: BLE001 - an audit hook that raises would stop the write it watches
        pass


sys.addaudithook(_hook)  # a hook cannot be removed; it does nothing unless a test sets _seen


@pytest.fixture
def watched():
    global _seen
    old_umask = os.umask(0o022)  # the usual umask: a file created without a mode would be 0644
    _seen = []
    try:
        yield _seen
    finally:
        _seen = None
        os.umask(old_umask)


def test_a_draft_holding_a_secret_is_owner_only_before_it_is_renamed_into_place(conversation, watched):
    convo, _ = conversation([
        [call("validate_params", {"workflow": "secret-note",
                                  "params": {"token": PLACEHOLDER, "service": {"password": PLACEHOLDER}}})],
        "Draft ready."])
    convo.set_sensitive("secret-note", "token", SECRET)
    events = convo.enter_sensitive("secret-note", "service.password", "pw-nested-7781")
    (draft,) = [e.draft for e in events if isinstance(e, DraftReady)]
    assert SECRET in draft.config_path.read_text()
    renames = [(name, mode) for event, name, mode in watched if event == "os.rename"]
    assert len(renames) == 1, watched
    temp_name, mode = renames[0]
    assert temp_name != draft.config_path.name and temp_name.startswith(f".{draft.config_path.name}.")
    assert mode == 0o600, oct(mode)                       # the whole secret on disk, owner-only already
    assert not [e for e in watched if e[0] == "os.chmod"]  # and no chmod afterwards: it was made so
    assert draft.config_path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in draft.config_path.parent.iterdir()) == [draft.config_path.name]
