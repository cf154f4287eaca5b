"""Who approves runs in a registry: the name a person gave once, remembered in `<registry>/.snakegate/approver.json`
(0600 in the owner-only folder), else the machine's identity (`git config user.name`, then the login name).

`resolve(root, given)` says which name a door records as the approver and where it came from; a name that is
only the machine's (`Approver.machine_only`) is one the chat asks the person to confirm before the first run,
and `remember` keeps their answer so it is not asked again. `clean_name` is the one reading of a typed name
(spaces collapsed, control characters dropped, at most MAX_NAME characters). A damaged, oversized or
symlinked approver.json reads as nothing remembered (the person is asked again), never as a crash. Never
decides what runs: the name is a provenance fact, not a permission.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from snakegate.errors import UserError
from snakegate.provenance import gitinfo
from snakegate.provenance.private import PRIVATE, private_folder

FILE = "approver.json"
MAX_NAME = 200         # characters of a name kept (the MCP form keeps as many)
MAX_BYTES = 4096       # an approver.json bigger than this is not read


@dataclass(frozen=True)
class Approver:
    name: str
    source: str        # given (--user) | remembered (approver.json) | git (user.name) | login ($USER)

    @property
    def machine_only(self) -> bool:
        """The name came from the machine, not from the person: the chat asks before the first run."""
        return self.source in ("git", "login")


def clean_name(text: object) -> str | None:
    """A typed name as recorded: printable characters, runs of spaces as one, at most MAX_NAME; None if empty."""
    if not isinstance(text, str):
        return None
    name = " ".join("".join(ch for ch in text if ch.isprintable() or ch.isspace()).split())[:MAX_NAME].strip()
    return name or None


def path_of(root: Path | str) -> Path:
    return Path(root, PRIVATE, FILE)


def remembered(root: Path | str) -> str | None:
    """The name remembered for this registry; None when there is none or it cannot be read as one."""
    path = path_of(root)
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return clean_name(data.get("name")) if isinstance(data, dict) else None


def remember(root: Path | str, name: str) -> str:
    """Keep `name` as this registry's approver (replacing the file whole); the name as kept. UserError when the
    name is empty; OSError when it cannot be written."""
    kept = clean_name(name)
    if kept is None:
        raise UserError(f"the approver must be a name (got {name!r}); type the name to record in each run")
    folder = private_folder(root)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".approver-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"name": kept}, out)
            out.write("\n")
        os.replace(tmp, folder / FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return kept


def machine_name(root: Path | str) -> Approver | None:
    """`git config user.name` as seen from the registry (repository, then global config), else the login name."""
    person = gitinfo.current_person(Path(root))  # the one reading of git's user, as the PROV record names it
    name = clean_name(person.name) if person.source == "git config" else None
    if name:
        return Approver(name, "git")
    login = clean_name(os.environ.get("USER") or os.environ.get("USERNAME") or "")
    return Approver(login, "login") if login else None


def resolve(root: Path | str, given: str | None = None) -> Approver:
    """The approver a door records: `given` (--user), else the remembered name, else the machine's. UserError
    when there is none."""
    if given is not None and given.strip():
        name = clean_name(given)
        if name is None:
            raise UserError(f"--user must be a name (got {given!r})")
        return Approver(name, "given")
    kept = remembered(root)
    if kept:
        return Approver(kept, "remembered")
    found = machine_name(root)
    if found is None:
        raise UserError("cannot tell who approves runs (no git user.name, no $USER); pass --user NAME")
    return found
