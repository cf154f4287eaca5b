"""What the gate's content checks read, so that the bytes it checks are the bytes it hashes.

The gate checks an input's content (its format, a table's header and rows, a sample sheet's rows and the files
they name, the preflight's views) and then takes its digest. Someone who can write to a data root could swap the
file in between: the digest would be honest, but the checks would have been of other bytes. `InputReads` closes
that window in one of these ways:

- with staging (`snakegate run`: snakegate.run.stage.Prestage), `path()` stages the input as soon as it is
  resolved, before its first check, and every check reads the copy: the very bytes that are hashed and that the
  jobs read. The source is read once, by the copy; the source path stays what the invocation, the messages and
  `input_files` name.
- a run folder's parse-time gate (snakegate.run.prepare) reads the copies its staging made, the same way; a
  sample sheet, whose copy is rewritten to name the staged files, is read at its source as below.
- without it (`snakegate validate`, plans, plain `snakemake`'s first gate), `path()` is the source, and the
  file's stamps (snakegate.provenance.known.stamp: device, inode, size, mtime and ctime) are taken before its first
  content read; `changed()` compares them after the gate has hashed it. A file rewritten, or renamed over, in
  between has other stamps, and the gate refuses it (code input_changed). A folder (artifact type `directory`)
  is stamped as itself and every file under it.

It reads stamps only (the copy is the stager's); it never writes. `Refused` is how a stager says why it would
not stage an input.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from snakegate.models import GateError
from snakegate.provenance.hashing import folder_files
from snakegate.provenance.known import stamp

CHANGED_HINT = "run again when nothing is writing it"


class Refused(OSError):
    """An input its stager would not stage, worded as the gate words the refusal: `code`, what follows the param
    and its value in the message (`says`), and `hint` (None: the gate's usual hint for that code). Any other
    OSError from staging is refused as unreadable."""

    def __init__(self, code: str, says: str, hint: str | None = None):
        super().__init__(says)
        self.code, self.says, self.hint = code, says, hint


def stamps(path: Path) -> tuple:
    """The stamps of a file, or of a folder and every file under it (OSError when it cannot be stat'ed)."""
    st = os.stat(path)
    if not os.path.isdir(path):
        return (stamp(st),)
    return (stamp(st), *((p.relative_to(path).as_posix(), stamp(os.stat(p))) for p in folder_files(Path(path))))


class InputReads:
    """Where each input's content checks read (`path`), and which inputs changed while the gate read them."""

    def __init__(self, read_input: Callable[[str, Path], Path | None] | None = None):
        # (input key, source) -> the staged copy (staged on first call), or None for an input it has no copy of
        self.read_input = read_input
        self._paths: dict[str, Path] = {}  # source -> what its checks read
        self._before: dict[str, tuple] = {}  # source -> its stamps before its first content read (no staging)

    def path(self, key: str, source: Path) -> Path:
        """What the content checks of `source` (input `key`) read: its staged copy, or the source, stamped first.
        OSError when it cannot be staged or stat'ed: the gate refuses it as unreadable."""
        if str(source) not in self._paths:
            copy = self.read_input(key, source) if self.read_input is not None else None
            if copy is not None:
                self._paths[str(source)] = Path(copy)
            else:
                self._before[str(source)] = stamps(source)
                self._paths[str(source)] = Path(source)
        return self._paths[str(source)]

    def readable(self, good: Mapping[tuple, object]) -> dict[tuple, object]:
        """`good` (param parts -> source, or a plan's Upstream) with each source read so far replaced by what its
        checks read; anything else is kept as it is."""
        return {parts: self._paths.get(str(found), found) if isinstance(found, Path) else found
                for parts, found in good.items()}

    def changed(self, files: Mapping[str, Path]) -> list[GateError]:
        """An input_changed error for each input (key -> source) whose stamps differ from those taken before its
        first content read: call it after the inputs are hashed. Staged inputs never change (the checks and the
        hash read one copy)."""
        errors = []
        for key, source in files.items():
            before = self._before.get(str(source))
            if before is None:
                continue
            try:
                now = stamps(source)
            except OSError:
                now = None
            if now != before:
                errors.append(GateError(
                    path=key, code="input_changed",
                    message=f"`{key}` = {source}: it changed while the gate read it, so the bytes it checked are "
                            "not the bytes it hashed",
                    hint=CHANGED_HINT))
        return errors
