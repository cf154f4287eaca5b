"""Owner-only folders: the registry's private folder `<registry>/.snakegate/` and everything snakegate keeps in it
(the run index, the registry key, refinement approvals, caches, the chat's audit log).

`Path.mkdir(parents=True, mode=0o700)` gives the mode to the last folder only; the parents it makes get the
default (0755 with the usual umask), so `.snakegate/` itself came out readable by everyone when a cache or
the run index made it first. Every writer makes its folders here: each missing level 0700, and a new
`.snakegate/` ignores itself in whatever git repository holds the registry. Never changes the mode of a
folder that already exists (an administrator may have shared it on purpose).
"""

from __future__ import annotations

from pathlib import Path

PRIVATE = ".snakegate"
IGNORE_ALL = "# snakegate's private records, keys and caches: never commit them\n*\n"


def private_path(folder: Path | str) -> Path:
    """Make `folder` and each missing parent owner-only (0700). Raises OSError."""
    folder = Path(folder)
    missing = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for level in reversed(missing):
        level.mkdir(mode=0o700, exist_ok=True)
        if level.name == PRIVATE:
            ignore = level / ".gitignore"
            if not ignore.exists():
                ignore.write_text(IGNORE_ALL, encoding="utf-8")
    return folder


def private_folder(registry_root: Path | str, *parts: str) -> Path:
    """`<registry_root>/.snakegate/<parts...>`, made as `private_path` makes folders. Raises OSError."""
    return private_path(Path(registry_root, PRIVATE, *parts))
