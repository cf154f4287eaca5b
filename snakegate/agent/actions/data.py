"""The data action: `inspect_data`, the model's only view of the researcher's files.

Lists the data roots or a folder inside them, or reports one file's artifact
type, column names and row count. It never returns a cell value, never
follows a path (or a symlink) out of the data roots, and never writes.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from snakegate.contract import artifacts
from snakegate.agent.actions.base import ActionContext, Args, Refused
from snakegate.metaschemas import artifact_types

MAX_ENTRIES = 200                   # folder listings are capped: a model needs names, not a full inventory
MAX_COUNT_BYTES = 64 * 1024 * 1024  # row counting reads at most this much; bigger tables report rows: null


class InspectDataArgs(Args):
    path: str = Field("", description="A file or folder inside the data roots, relative to the registry root "
                                      "(e.g. 'data/examples/tabular-penguins.csv'). Empty lists the data roots' files.")


def portable(path: Path, root: Path) -> str:
    """Registry-relative when inside the registry (the form a run config uses), else absolute."""
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def artifact_type(path: Path) -> str | None:
    """The artifact type `path` parses as: types claiming its extension first, then by content.

    Content-only guesses skip the checks that prove nothing alone ("none", and yaml's plain text
    check), and a table must have more than one column (any text line is a one-column table)."""
    types = artifact_types()
    suffix = path.suffix.lower()
    by_ext = [t for t, spec in types.items() if suffix in spec.get("extensions", [])]
    order = {"magic": 0, "prefix": 1, "json": 2, "table": 3, "text": 4}
    by_content = sorted((t for t, spec in types.items() if t not in by_ext and spec.get("check") in order
                         and t != "yaml"), key=lambda t: order[types[t]["check"]])
    for t in by_ext:
        if artifacts.check(path, t) is None:
            return t
    for t in by_content:
        if artifacts.check(path, t) is not None:
            continue
        if artifacts.is_table(t) and len(artifacts.table_header(path, artifacts.delimiter(t)) or []) < 2:
            continue
        return t
    return None


def _count_rows(path: Path) -> int | None:
    """Data lines after the header, or None when the file is bigger than the counting cap."""
    if path.stat().st_size > MAX_COUNT_BYTES:
        return None
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if last != b"\n":
        lines += 1  # the last line has no newline
    return max(lines - 1, 0)


def _entries(folder: Path, roots: list[Path], root: Path, recursive: bool) -> list[dict]:
    found = []
    walker = folder.rglob("*") if recursive else folder.iterdir()
    for p in walker:
        try:
            real = p.resolve()
        except (OSError, RuntimeError):
            continue
        if not _inside(real, roots) or p.name.startswith("."):
            continue  # a symlink leading out of the data roots is not shown, nor hidden files
        if recursive and not real.is_file():
            continue
        found.append({"path": portable(p.absolute(), root), "kind": "folder" if real.is_dir() else "file"})
    return sorted(found, key=lambda e: e["path"])[:MAX_ENTRIES]


def data_files(settings) -> list[dict]:
    """Every file inside the data roots (symlinks out of them and hidden files left out), capped, sorted."""
    root = settings.registry_root
    roots = [r.resolve() for r in settings.data_roots]
    entries = []
    for r in roots:
        if r.is_dir():
            entries.extend(_entries(r, roots, root, recursive=True))
    return sorted({e["path"]: e for e in entries}.values(), key=lambda e: e["path"])[:MAX_ENTRIES]


def inspect_data(ctx: ActionContext, args: InspectDataArgs):
    root = ctx.settings.registry_root
    roots = [r.resolve() for r in ctx.settings.data_roots]
    roots_text = ", ".join(portable(r, root) for r in roots) or "(none configured)"
    if not args.path.strip():
        entries = data_files(ctx.settings)
        return ({"kind": "folder", "path": "", "entries": entries},
                f"listed the data roots ({roots_text}): {len(entries)} file(s)", None)
    try:
        raw = Path(args.path).expanduser()
        resolved = (raw if raw.is_absolute() else root / raw).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        reason = "a symlink loop" if isinstance(exc, RuntimeError) else (getattr(exc, "strerror", None) or "bad path")
        raise Refused("not_found", f"`path` = `{args.path}` cannot be resolved ({reason})",
                      "give a path inside the data roots, e.g. one listed by inspect_data with an empty path")
    if not _inside(resolved, roots):
        # Never name where it resolves to: that would show a symlink's target or a private folder.
        raise Refused("path_outside_roots",
                      f"`path` = `{args.path}` is outside the allowed data roots ({roots_text})",
                      "only files inside the data roots can be used; ask the researcher to copy the file into "
                      "one, or call inspect_data with an empty path to list what is there")
    shown = portable(resolved, root)
    if resolved.is_dir():
        entries = _entries(resolved, roots, root, recursive=False)
        return ({"kind": "folder", "path": shown, "entries": entries},
                f"listed {shown}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}", None)
    if not resolved.is_file():
        raise Refused("not_found", f"`path` = `{args.path}` does not exist",
                      "check the spelling; call inspect_data with an empty path to list the data roots' files")
    type_name = artifact_type(resolved)
    columns = rows = None
    if type_name and artifacts.is_table(type_name):
        columns = artifacts.table_header(resolved, artifacts.delimiter(type_name))
        rows = _count_rows(resolved)
    detail = f", {len(columns)} columns, {rows if rows is not None else 'many'} rows" if columns else ""
    return ({"kind": "file", "path": shown, "type": type_name, "columns": columns, "rows": rows},
            f"inspected {shown}: {type_name or 'unknown type'}{detail}", None)
