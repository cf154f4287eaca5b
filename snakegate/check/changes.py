"""Which workflows a change touches: the selection behind `snakegate check --changed` / `test --changed`.

`changes()` asks git which files differ between a base revision and the working tree (untracked files
included) and sorts them: a file inside `workflows/<id>/` touches that workflow only; a file outside every
workflow folder that a check can read (snakegate.toml with the registry's types and data roots, schemas/,
data/, the top-level Snakefile, profiles/, shared code under workflows/_<name>/, anything not known to be
inert) touches them all. Fail closed: only paths known to be read by no check (docs, Markdown, CI files, run
folders, plans/ which a whole-registry check gates anyway) are left out. It reads git, nothing else, and
writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from snakegate.errors import ExitCode, UserError

# paths outside workflows/<id>/ that no check of a workflow reads; any other changed path re-checks all
_INERT_DIRS = ("docs", "runs", ".github", "tests", "bench", "plans", ".snakegate", ".snakemake")
_INERT_SUFFIXES = (".md", ".rst", ".txt")
_INERT_FILES = (".gitignore", "LICENSE")


@dataclass(frozen=True)
class Changes:
    """What changed since `base`: the workflow ids touched, or `shared` (the path that touches them all)."""

    base: str
    ids: frozenset[str]
    shared: str | None = None

    @property
    def all(self) -> bool:
        return self.shared is not None


def touched(names: list[str], base: str) -> Changes:
    """Sort registry-relative changed paths (pure): the workflows they touch, or the first shared one."""
    ids: set[str] = set()
    for name in sorted(names):
        parts = PurePosixPath(name).parts
        if not parts:
            continue
        if len(parts) >= 3 and parts[0] == "workflows" and not parts[1].startswith((".", "_")):
            ids.add(parts[1])
        elif not _inert(parts):
            return Changes(base=base, ids=frozenset(), shared=name)
    return Changes(base=base, ids=frozenset(ids))


def _inert(parts: tuple[str, ...]) -> bool:
    if parts[0] in _INERT_DIRS:
        return True
    if len(parts) == 1 and (parts[0] in _INERT_FILES or parts[0].endswith(_INERT_SUFFIXES)):
        return True
    # workflows/CONTRIBUTING.md and the like; a workflows/_shared/ file may be included by any workflow
    return len(parts) == 2 and parts[0] == "workflows" and parts[1].endswith(_INERT_SUFFIXES)


def changes(root: Path, base: str) -> Changes:
    """The changes between git revision `base` and the working tree of the registry at `root`."""
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UserError(f"--changed needs a git checkout, and {root} is not inside one; run `git init` there "
                        "or name the workflows to check", ExitCode.USAGE) from None
    try:
        repo.commit(base)
    except (git.BadName, ValueError, git.GitCommandError):
        raise UserError(f"git cannot resolve `{base}` in {repo.working_tree_dir}; fetch it first "
                        "(in CI: actions/checkout with fetch-depth: 0)", ExitCode.USAGE) from None
    top = Path(repo.working_tree_dir).resolve()
    names = repo.git.diff("--name-only", "--no-renames", base, "--").splitlines() + list(repo.untracked_files)
    rel = []
    for name in names:
        try:
            rel.append((top / name).relative_to(root.resolve()).as_posix())
        except ValueError:
            continue  # outside the registry (a registry kept in a sub-folder of a bigger repository)
    return touched(rel, base)


def changed_since(root: Path, rev: str) -> set[str] | None:
    """Workflow ids whose folder changed since `rev`; None means "all" (a shared file changed)."""
    found = changes(root, rev)
    return None if found.all else set(found.ids)
