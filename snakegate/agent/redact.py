"""Hide `x-sensitive` values from the model: replace them by a placeholder, scrub them out of free text.

Owns the walk over a params object (through `snakegate.contract.dialect.iter_nodes`, so
nested objects and array items count); the placeholder "<redacted>" and what counts
as a secret string are the provenance record's (`snakegate.provenance.secrets`).
Pure functions on plain data: nothing is read, written or sent from here.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from snakegate.contract.dialect import iter_nodes
# One definition of what counts as a secret string, shared with the provenance record's scrubbing.
from snakegate.provenance.secrets import PLACEHOLDER, secret_strings  # noqa: F401  (re-exported)

# What the conversation records when the researcher types a sensitive value into the masked field:
# the model (or the guided dialogue) learns that the value exists, never the value.
MASKED_NOTE = "(I entered `{param}` in the masked field.)"
MASKED_NOTE_RE = re.compile(r"^\(I entered `([^`]+)` in the masked field\.\)$")


def sensitive_params(schema: dict, prefix: tuple = ()) -> dict[tuple, dict]:
    """{path parts: sub-schema} of every property the contract marks `x-sensitive: true`, through nested objects."""
    found: dict[tuple, dict] = {}
    for name, sub in ((schema or {}).get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        if sub.get("x-sensitive") is True:
            found[prefix + (name,)] = sub
        elif sub.get("properties"):
            found.update(sensitive_params(sub, prefix + (name,)))
    return found


def sensitive_values(schema: dict, params: Any) -> dict[tuple, Any]:
    """{path parts below params: value} for every value the contract marks `x-sensitive: true`.

    A sensitive object or array counts as one value: whatever sits below it is hidden with it."""
    found: dict[tuple, Any] = {}
    if not isinstance(params, dict):
        return found
    for node in iter_nodes(schema, params):
        if node.is_key or node.schema.get("x-sensitive") is not True:
            continue
        if any(node.parts[:n] in found for n in range(1, len(node.parts))):
            continue  # already hidden with its sensitive parent
        found[node.parts] = node.value
    return found


def redact_params(schema: dict, params: Any) -> Any:
    """A copy of `params` with every sensitive value replaced by PLACEHOLDER."""
    out = copy.deepcopy(params)
    for parts in sensitive_values(schema, params):
        _set(out, parts, PLACEHOLDER)
    return out


def scrub(value: Any, secrets: list[str]) -> Any:
    """`value` (any JSON-able data) with each secret inside any string replaced by PLACEHOLDER.

    Gate messages quote the offending value (`got s3cret`); this keeps such sentences safe to send."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, PLACEHOLDER)
        return value
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and str(value) in secrets:
        return PLACEHOLDER
    return value


def _set(obj: Any, parts: tuple, value: Any) -> None:
    for p in parts[:-1]:
        obj = obj[p]
    obj[parts[-1]] = value
