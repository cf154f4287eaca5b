"""Where things are: the registry root, the data roots and the runs folder.

The registry root is the nearest folder at or above the current directory that
holds `workflows/`; `--registry DIR` or `SNAKEGATE_REGISTRY` overrides it.
Settings come from `snakegate.toml` at the registry root:

    [paths]
    data_roots = ["data"]   # folders input artifacts must live in
    runs = "runs"           # where run folders are written

and are overridden by `SNAKEGATE_DATA_ROOTS` (os.pathsep-separated) and
`SNAKEGATE_RUNS`. Relative paths resolve against the registry root.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from snakegate.errors import UserError

SETTINGS_FILE = "snakegate.toml"


@dataclass(frozen=True)
class Settings:
    registry_root: Path
    data_roots: tuple[Path, ...]
    runs_dir: Path

    def with_data_roots(self, *roots: Path) -> "Settings":
        return Settings(self.registry_root, tuple(self.data_roots) + tuple(r.resolve() for r in roots), self.runs_dir)


def find_registry_root(start: Path | None = None, explicit: str | os.PathLike | None = None) -> Path:
    """Explicit folder, then $SNAKEGATE_REGISTRY, then the nearest ancestor holding workflows/."""
    chosen = explicit or os.environ.get("SNAKEGATE_REGISTRY")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        if not (root / "workflows").is_dir():
            raise UserError(
                f"registry {root} has no workflows/ folder; point --registry (or SNAKEGATE_REGISTRY) "
                "at the folder that holds workflows/"
            )
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "workflows").is_dir():
            return folder
    raise UserError(
        f"no registry found at or above {here}: run inside a snakegate registry "
        "(a folder with workflows/) or pass --registry DIR"
    )


def _resolve(root: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return (path if path.is_absolute() else root / path).resolve()


def load_settings(registry_root: Path) -> Settings:
    data = {}
    settings_path = registry_root / SETTINGS_FILE
    if settings_path.is_file():
        try:
            data = tomllib.loads(settings_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{settings_path} is not valid TOML ({exc}); fix the file or remove it to use the defaults")
    paths = data.get("paths", {}) if isinstance(data.get("paths", {}), dict) else {}
    roots = paths.get("data_roots", ["data"])
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise UserError(f"{settings_path}: paths.data_roots must be a list of folder names, got {roots!r}")
    runs = paths.get("runs", "runs")
    if not isinstance(runs, str):
        raise UserError(f"{settings_path}: paths.runs must be a folder name, got {runs!r}")
    if env_roots := os.environ.get("SNAKEGATE_DATA_ROOTS"):
        roots = [r for r in env_roots.split(os.pathsep) if r]
    runs = os.environ.get("SNAKEGATE_RUNS", runs)
    return Settings(
        registry_root=registry_root,
        data_roots=tuple(_resolve(registry_root, r) for r in roots),
        runs_dir=_resolve(registry_root, runs),
    )


def settings_for(explicit_registry: str | os.PathLike | None = None) -> Settings:
    return load_settings(find_registry_root(explicit=explicit_registry))
