"""How a run's params are shown: sensitive values masked through the contract (`masked_params`,
`sensitive_name`), free text scrubbed of them (`Scrubber`), and values written as a person reads them
(`value_text`).

One definition for the CLI, the report and the agent (through snakegate.views.facts, which re-exports what the
agent reads there). Reads only a run folder's config.yaml and invocation.json, bounded; writes nothing,
runs nothing. Without a contract nothing can be proven safe, so every value counts as sensitive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from snakegate.provenance import runstore, secrets

MASK = "••••••"           # how a sensitive value is shown (CLI and report); the agent has its own placeholder


def masked_params(schema: dict | None, params: dict) -> dict:
    """A copy of params with every `x-sensitive` value (and any keyed hash read back from a record) shown
    as MASK. Without a schema nothing can be proven safe, so every value is masked (fail closed)."""
    if not isinstance(params, dict):
        return {}
    if schema is None:
        return {k: MASK for k in params}
    out = json.loads(json.dumps(params, default=str))
    for parts in secrets.sensitive_values(schema, params):
        target = out
        for p in parts[:-1]:
            target = target[p]
        target[parts[-1]] = MASK

    def hide_hashes(value):
        if secrets.is_keyed_hash(value):
            return MASK
        if isinstance(value, dict):
            return {k: hide_hashes(v) for k, v in value.items()}
        if isinstance(value, list):
            return [hide_hashes(v) for v in value]
        return value
    return hide_hashes(out)


def value_text(value: Any, nested: bool = False) -> str:
    """A param value as a person reads it: text as is, lists as `a, b`, mappings as `k: v; k: v`, and inside
    those, lists as `[a, b]` and mappings as `k=v, k=v` (never a Python or JSON repr)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        if not value:
            return "[]" if nested else "(empty list)"
        text = ", ".join("{" + value_text(v, True) + "}" if isinstance(v, dict) else value_text(v, True)
                         for v in value)
        return f"[{text}]" if nested else text
    if isinstance(value, dict):
        if not value:
            return "{}" if nested else "(empty)"
        if nested:
            return ", ".join(f"{k}={value_text(v, True)}" for k, v in value.items())
        return "; ".join(f"{k}: {value_text(v, True)}" for k, v in value.items())
    return str(value)


def plan_config_params(run_dir: Path) -> dict[str, dict]:
    """{step: params} of runs/<id>/config.yaml, what Snakemake got (plain sensitive values, absolute input
    paths): only to find the values to scrub from free text. {} when it cannot be read."""
    try:
        from ruamel.yaml import YAML
        text = runstore.read_record(Path(run_dir) / runstore.CONFIG_YAML).decode("utf-8")  # bounded, regular only
        data = YAML(typ="safe", pure=True).load(text)
    except Exception:  # noqa: BLE001 - unreadable or missing: invocation.json's keyed hashes are all there is
        return {}
    steps = data.get("steps") if isinstance(data, dict) else None
    return {str(n): s["params"] for n, s in (steps or {}).items()
            if isinstance(s, dict) and isinstance(s.get("params"), dict)} if isinstance(steps, dict) else {}


class Scrubber:
    """Replaces a run's sensitive values in free text (errors, log lines) by MASK.

    Built from the run's config.yaml (the one file with the plain values) and its contract; it keeps the
    values in memory only."""

    def __init__(self, run_dir: Path, schema: dict | None, plan=None):
        """`plan` (views.plan.PlanView): a plan's run, whose values sit under each step, by each step's contract."""
        from snakegate.provenance.capture import run_config_params
        if plan is not None:
            schema, recorded = plan.scope()
            params = plan_config_params(run_dir)
        else:
            params = run_config_params(run_dir) or {}
            recorded = (runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation") or {}) \
                .get("params") or {}
        if schema is None:  # unknown contract: every param value counts as sensitive
            values = list(params.values())
        else:
            values = [*secrets.sensitive_values(schema, params).values(),
                      *secrets.sensitive_values(schema, recorded).values()]
        self.secrets = secrets.secret_strings(values)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                value = value.replace(secret, MASK)
            return value
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value


def sensitive_name(schema: dict | None, name: str) -> bool:
    """Whether a (dotted) param name is, holds or lies inside an `x-sensitive` param (unknown contract:
    every name, fail closed)."""
    if schema is None:
        return True
    node = schema
    for part in name.split("."):
        if not isinstance(node, dict) or node.get("x-sensitive") is True:
            return True
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return False
    return _holds_sensitive(node)


def _holds_sensitive(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("x-sensitive") is True:
        return True
    children = list((node.get("properties") or {}).values())
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            children.append(node[key])
    return any(_holds_sensitive(c) for c in children)
