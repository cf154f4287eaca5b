"""The registry: every workflows/<id>/ folder, its validated manifest and its contract.

Loading validates each workflow.yaml against snakegate/schemas/workflow.schema.json; an
invalid manifest is a `RegistryError` naming the file and the field. Loading a registry also puts its
own artifact types (snakegate.toml [types], snakegate.registry.types) in force beside the built-in ones;
invalid ones refuse the whole registry, naming the field. Search
ranks workflows by how well a query matches id, title, tags and description.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ruamel.yaml import YAML, YAMLError

from snakegate import metaschemas
from snakegate.errors import UserError
from snakegate.provenance.hashing import workflow_hash
from snakegate.models import Manifest


class RegistryError(UserError):
    """A workflow folder that cannot be loaded; the message names the file."""


def _yaml_load(path: Path):
    try:
        return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (YAMLError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{path}: not valid YAML ({exc})")


def _yaml_text_load(path: Path, raw: bytes):
    try:
        return YAML(typ="safe", pure=True).load(raw.decode("utf-8"))
    except (YAMLError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{path}: not valid YAML ({exc})")


def manifest_problems(data, folder_name: str) -> list[str]:
    """Sentences for every way `data` fails the manifest meta-schema (pure)."""
    if not isinstance(data, dict):
        return ["the manifest must be a mapping of fields (id, version, title, ...)"]
    problems = []
    for err in sorted(metaschemas.validator("workflow.schema.json").iter_errors(data), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        # "is not valid under any of the given schemas" alone names no fix: say what the field accepts
        accepts = err.schema.get("description") if err.validator in ("oneOf", "anyOf") else None
        problems.append(f"{where}: {err.message}" + (f"; it takes {accepts}" if accepts else ""))
    names = [t.get("name") for t in data.get("tools") or [] if isinstance(t, dict)] if isinstance(data.get("tools"), list) else []
    repeated = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
    if repeated:
        problems.append(f"tools: {', '.join(repeated)} declared more than once")
    outputs = data.get("outputs") if isinstance(data.get("outputs"), dict) else {}
    test = data.get("test") if isinstance(data.get("test"), dict) else {}
    targets = test.get("targets") if isinstance(test.get("targets"), dict) else {}
    for case, names in targets.items():
        for name in names if isinstance(names, list) else []:
            if isinstance(name, str) and name not in outputs:
                problems.append(f"test.targets.{case}: `{name}` is not a declared output of the workflow (its "
                                f"outputs: {', '.join(outputs) or 'none'})")
    if isinstance(data.get("id"), str) and data["id"] != folder_name:
        problems.append(f"id: {data['id']!r} must equal the folder name {folder_name!r}")
    return problems


@dataclass
class Workflow:
    """One registry entry. The schema is read lazily; the content hash is computed on demand."""

    folder: Path
    manifest: Manifest

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def snakefile(self) -> Path:
        """Snakefile at the top, or the standard layout's workflow/Snakefile."""
        top = self.folder / "Snakefile"
        if not top.is_file() and (self.folder / "workflow" / "Snakefile").is_file():
            return self.folder / "workflow" / "Snakefile"
        return top

    @cached_property
    def schema(self) -> dict:
        path = self.folder / "schema.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RegistryError(f"{path} is missing: every workflow needs a schema.json parameter contract")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RegistryError(f"{path}: not valid JSON ({exc})")
        if not isinstance(data, dict):
            raise RegistryError(f"{path}: the contract must be a JSON object")
        return data

    def content_hash(self) -> str:
        """The hash the invocation pins: every authored file except test/ (see hashing.workflow_hash)."""
        return workflow_hash(self.folder)

    def examples(self) -> list[Path]:
        return sorted((self.folder / "examples").glob("*.yaml"))


@dataclass
class Registry:
    root: Path
    workflows: dict[str, Workflow] = field(default_factory=dict)
    # folder name -> why it could not be loaded; a broken contribution never hides the others
    broken: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path) -> "Registry":
        from snakegate.registry.manifest_cache import ManifestCache
        from snakegate.registry.types import use_types_of

        use_types_of(root)
        reg = cls(root=root)
        cache = ManifestCache(root)
        for manifest_path in sorted((root / "workflows").glob("*/workflow.yaml")):
            try:
                wf = load_workflow(manifest_path.parent, cache=cache)
            except RegistryError as exc:
                reg.broken[manifest_path.parent.name] = exc.message
                continue
            reg.workflows[wf.id] = wf
        cache.save()
        return reg

    def get(self, workflow_id: str) -> Workflow | None:
        return self.workflows.get(workflow_id)

    def ids(self) -> list[str]:
        return sorted(self.workflows)

    def search(self, text: str, limit: int = 10) -> list[tuple[Workflow, float]]:
        """Workflows ranked by a weighted term match (id > title > tags > description)."""
        terms = [t for t in re.split(r"[^a-z0-9µ]+", text.lower()) if t]
        scored = []
        for wf in self.workflows.values():
            m = wf.manifest
            fields = [
                (m.id.lower(), 5.0), (m.title.lower(), 3.0),
                (" ".join(m.tags).lower(), 3.0), (m.description.lower(), 1.0),
            ]
            score = 0.0
            for term in terms:
                for value, weight in fields:
                    words = re.split(r"[^a-z0-9µ]+", value)
                    if term in words:
                        score += weight
                    elif term in value:
                        score += weight / 2
            if score > 0 or not terms:
                scored.append((wf, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0].id))
        return scored[:limit]


def load_workflow(folder: Path, expected_id: str | None = None, cache=None) -> Workflow:
    """The workflow in `folder`; its id must be `expected_id` (default: the folder's name; a run's
    copy lives in runs/<run_id>/workflow/, so it names the id it must have). `cache` (a ManifestCache) skips
    parsing and checking a workflow.yaml whose exact bytes passed before."""
    manifest_path = folder / "workflow.yaml"
    name = expected_id or folder.name
    key = None
    if cache is not None:
        try:
            raw = manifest_path.read_bytes()
        except OSError as exc:
            raise RegistryError(f"{manifest_path}: cannot be read ({exc.strerror or exc})") from None
        key = cache.key(raw, name)
        data = cache.get(key)
        if data is not None:
            return Workflow(folder=folder, manifest=Manifest.model_validate(data))
        data = _yaml_text_load(manifest_path, raw)
    else:
        data = _yaml_load(manifest_path)
    problems = manifest_problems(data, name)
    if problems:
        raise RegistryError(
            f"{manifest_path} is not a valid workflow manifest:\n  - " + "\n  - ".join(problems)
            + "\n  (see snakegate/schemas/workflow.schema.json and workflows/CONTRIBUTING.md)"
        )
    workflow = Workflow(folder=folder, manifest=Manifest.model_validate(data))
    if key is not None:
        cache.put(key, data)
    return workflow
