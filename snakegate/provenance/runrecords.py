"""What a run folder's own records say that the PROV record and the RO-Crate both need.

The params Snakemake got (config.yaml), the run's `x-sensitive` values (so records
carry their keyed hash and free text is scrubbed of them), and which params name
input files. Only reads the run folder and the registry's key (secrets.py).
"""

from __future__ import annotations

from pathlib import Path

from snakegate.provenance import runstore, secrets


def run_config_params(run_dir: Path) -> dict | None:
    """The params of runs/<id>/config.yaml (what Snakemake got: absolute input paths, plaintext values)."""
    try:
        from ruamel.yaml import YAML
        text = runstore.read_record(Path(run_dir) / runstore.CONFIG_YAML).decode("utf-8")  # bounded, regular only
        data = YAML(typ="safe", pure=True).load(text)
    except Exception:  # noqa: BLE001 - unreadable or missing: the caller falls back to invocation.json
        return None
    return data["params"] if isinstance(data, dict) and isinstance(data.get("params"), dict) else None


def run_secrets(run_dir: Path, registry_root: Path, schema: dict) -> tuple[bytes | None, list[str]]:
    """The registry key and the text of every x-sensitive value of a run (from config.yaml, the one record
    that holds them in plain text), so records can hash them and scrub them out of free text.
    (None, []) when the contract marks nothing sensitive."""
    params = run_config_params(run_dir) or {}
    invocation = (runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation") or {})
    found = {**secrets.sensitive_values(schema or {}, invocation.get("params") or {}),
             **secrets.sensitive_values(schema or {}, params)}
    if not found:
        return None, []
    return secrets.registry_key(registry_root), secrets.secret_strings(found.values())


def scrub(text: str | None, hidden: list[str], key: bytes | None) -> str | None:
    """`text` with every sensitive value replaced by its keyed hash (see secrets.scrub)."""
    return secrets.scrub(text, hidden, key) if key is not None else text


def artifact_params(schema: dict, params: dict) -> dict[str, tuple[str, str]]:
    """Input file value -> (param name, artifact type) for every `x-artifact` param."""
    out = {}
    for parts, sub, value in secrets.walk(schema, params):
        if sub.get("x-artifact") and isinstance(value, str):
            out[value] = (".".join(str(p) for p in parts if not isinstance(p, int)), sub["x-artifact"])
    return out
