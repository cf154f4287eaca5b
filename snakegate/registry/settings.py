"""Where things are: the registry root, the data roots and the runs folder.

The registry root is the nearest folder at or above the current directory that
holds `workflows/`; `--registry DIR` or `SNAKEGATE_REGISTRY` overrides it.
Settings come from `snakegate.toml` at the registry root:

    [paths]
    data_roots = ["data"]   # folders input artifacts must live in
    runs = "runs"           # where run folders are written
    drafts = "drafts"       # where the chat writes validated run configs awaiting approval

    [run]
    stage_inputs = "copy"   # how a run takes its inputs into its folder: "copy" (a reflink where the
                            # filesystem can) or "link" (a hard link, for inputs too big to copy)

    [provenance]
    record_hostname = true  # false: PROV records leave out the machine's host name

    [agent]                 # the chat's model; without a model the chat is an offline guided dialogue
    base_url = "http://localhost:11434/v1"   # any OpenAI-compatible server
    model = "qwen2.5:7b"
    timeout = 300           # seconds per model request (a small model on a CPU is slow)
    max_tokens = 768        # longest reply asked for; a cut reply is shown as cut
    temperature = 0.0
    tool_mode = "auto"      # native tool calls, "json" (constrained JSON steps, for small models), or auto-detect

and are overridden by `SNAKEGATE_DATA_ROOTS` (os.pathsep-separated),
`SNAKEGATE_RUNS`, `SNAKEGATE_DRAFTS`, `SNAKEGATE_LLM_BASE_URL` and
`SNAKEGATE_LLM_MODEL`. The API key is read only from the environment
(`SNAKEGATE_LLM_API_KEY`, else `OPENAI_API_KEY`), never from a file in the
registry. Relative paths resolve against the registry root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from snakegate.errors import UserError

SETTINGS_FILE = "snakegate.toml"


@dataclass(frozen=True)
class Settings:
    registry_root: Path
    data_roots: tuple[Path, ...]
    runs_dir: Path
    drafts_dir: Path | None = None  # None: <registry>/drafts
    llm_base_url: str | None = None  # None: no model configured; the chat runs the guided dialogue
    llm_model: str | None = None
    llm_timeout: float | None = None      # None: the backend's default
    llm_max_tokens: int | None = None
    llm_temperature: float | None = None
    llm_tool_mode: str | None = None      # "auto" | "native" | "json"; None: auto
    audit_dir: Path | None = None         # None: <registry>/.snakegate/audit (the chat audit log; git-ignored)
    record_hostname: bool = True  # [provenance] record_hostname: the PROV record names the machine
    stage_inputs: str = "copy"  # [run] stage_inputs: "copy" or "link" (snakegate.run.stage)

    def __post_init__(self):
        if self.drafts_dir is None:
            object.__setattr__(self, "drafts_dir", self.registry_root / "drafts")
        if self.audit_dir is None:
            object.__setattr__(self, "audit_dir", self.registry_root / ".snakegate" / "audit")

    def with_data_roots(self, *roots: Path) -> "Settings":
        return replace(self, data_roots=tuple(self.data_roots) + tuple(r.resolve() for r in roots))


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
        import tomllib  # here, not at the top: a cluster job loads settings without a snakegate.toml to read

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
    drafts = paths.get("drafts", "drafts")
    if not isinstance(drafts, str):
        raise UserError(f"{settings_path}: paths.drafts must be a folder name, got {drafts!r}")
    agent = data.get("agent", {}) if isinstance(data.get("agent", {}), dict) else {}
    llm = {}
    for key in ("base_url", "model"):
        value = agent.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise UserError(f"{settings_path}: agent.{key} must be a non-empty string, got {value!r}")
        llm[key] = os.environ.get(f"SNAKEGATE_LLM_{key.upper()}") or value
    tuning = _agent_tuning(agent, settings_path)
    provenance = data.get("provenance", {}) if isinstance(data.get("provenance", {}), dict) else {}
    record_hostname = provenance.get("record_hostname", True)
    if not isinstance(record_hostname, bool):
        raise UserError(f"{settings_path}: provenance.record_hostname must be true or false, got {record_hostname!r}")
    run = data.get("run", {}) if isinstance(data.get("run", {}), dict) else {}
    stage_inputs = run.get("stage_inputs", "copy")
    if stage_inputs not in ("copy", "link"):
        raise UserError(f"{settings_path}: run.stage_inputs must be \"copy\" or \"link\", got {stage_inputs!r}")
    if env_roots := os.environ.get("SNAKEGATE_DATA_ROOTS"):
        roots = [r for r in env_roots.split(os.pathsep) if r]
    runs = os.environ.get("SNAKEGATE_RUNS", runs)
    drafts = os.environ.get("SNAKEGATE_DRAFTS", drafts)
    return Settings(
        registry_root=registry_root,
        data_roots=tuple(_resolve(registry_root, r) for r in roots),
        runs_dir=_resolve(registry_root, runs),
        drafts_dir=_resolve(registry_root, drafts),
        llm_base_url=llm["base_url"],
        llm_model=llm["model"],
        **tuning,
        record_hostname=record_hostname,
        stage_inputs=stage_inputs,
    )


AGENT_NUMBERS = {"timeout": (float, 1, 3600), "max_tokens": (int, 16, 131072), "temperature": (float, 0, 2)}


def _agent_tuning(agent: dict, settings_path: Path) -> dict:
    """[agent] timeout, max_tokens, temperature and tool_mode, checked; absent ones stay None (the defaults)."""
    out = {}
    for key, (kind, low, high) in AGENT_NUMBERS.items():
        value = agent.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)) \
                or not low <= value <= high:
            raise UserError(f"{settings_path}: agent.{key} must be {'an integer' if kind is int else 'a number'} "
                            f"from {low} to {high}, got {value!r}")
        out[f"llm_{key}"] = kind(value)
    mode = agent.get("tool_mode")
    if mode is not None:
        if mode not in ("auto", "native", "json"):
            raise UserError(f"{settings_path}: agent.tool_mode must be \"auto\", \"native\" or \"json\", got {mode!r}")
        out["llm_tool_mode"] = mode
    return out


def settings_for(explicit_registry: str | os.PathLike | None = None) -> Settings:
    return load_settings(find_registry_root(explicit=explicit_registry))
