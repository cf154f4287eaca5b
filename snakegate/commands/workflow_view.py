"""How `snakegate show ID` reads at 80 columns: the workflow, then one entry per parameter with its real type
(enum values, array item types, mapping keys and values, file types), whether it is required, its default,
its limits and its description, wrapped at word boundaries; the external tools it needs and how to install
them; its outputs; and the workflows it connects to.

Pure: a manifest and a JSON-Schema contract in, lines out.
"""

from __future__ import annotations

import json
from typing import Any

from snakegate.commands.layout import wrap

_SCALARS = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false", "null": "null",
            "object": "mapping", "array": "list"}


def type_text(schema: Any) -> str:
    """A schema's type as a person says it: 'one of a, b', 'list of integers', 'path to a csv-table file',
    'mapping from column of dataset_file to object with min (number), max (number)'."""
    if not isinstance(schema, dict):
        return "any value"
    if "x-artifact" in schema:
        text = f"path to a {schema['x-artifact']} file"
        if schema.get("x-builtins"):
            text += " or one of " + ", ".join(schema["x-builtins"])
        return text
    if "enum" in schema:
        return "one of " + ", ".join(_literal(v) for v in schema["enum"])
    if "const" in schema:
        return f"exactly {_literal(schema['const'])}"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(type_text({**schema, "type": k}) for k in kind)
    if kind == "array" or "items" in schema:
        if "x-column-of" in schema:
            return f"list of columns of {schema['x-column-of']}"
        items = schema.get("items")
        return f"list of {_plural(items)}" if isinstance(items, dict) else "list"
    if kind == "object" or "properties" in schema or "additionalProperties" in schema:
        return _object_text(schema)
    if kind == "string" and "x-column-of" in schema:
        return f"column of {schema['x-column-of']}"
    if kind in _SCALARS:
        return _SCALARS[kind]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(type_text(s) for s in schema[key])
    return "any value"


def _plural(items: dict) -> str:
    text = type_text(items)
    if "x-column-of" in items:
        return f"columns of {items['x-column-of']}"
    if text.startswith("object with "):
        return "objects, each with " + text.removeprefix("object with ")
    if text.startswith(("one of ", "path to", "mapping")):
        return f"items, each {text}"
    return {"text": "texts", "integer": "integers", "number": "numbers", "true/false": "true/false values",
            "list": "lists"}.get(text, f"{text} values")


def _object_text(schema: dict) -> str:
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    parts = []
    if props:
        required = set(schema.get("required") or [])
        fields = [f"{name} ({type_text(sub)}{', required' if name in required else ''})" for name, sub in props.items()]
        parts.append("object with " + ", ".join(fields))
    if isinstance(extra, dict):
        keys = (schema.get("propertyNames") or {})
        key_text = f"column of {keys['x-column-of']}" if "x-column-of" in keys else "name"
        parts.append(f"mapping from {key_text} to {type_text(extra)}")
    return "; ".join(parts) or "mapping"


def _literal(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def limits_text(schema: dict) -> list[str]:
    """Ranges, lengths, item counts, uniqueness and table columns, as short phrases."""
    out = []
    for key, phrase in (("minimum", "≥ {}"), ("exclusiveMinimum", "> {}"), ("maximum", "≤ {}"),
                        ("exclusiveMaximum", "< {}")):
        if key in schema:
            out.append(phrase.format(_literal(schema[key])))
    lo, hi = schema.get("minItems"), schema.get("maxItems")
    if lo is not None and lo == hi:
        out.append(f"exactly {lo} items")
    else:
        if lo:
            out.append(f"at least {lo} item{'s' if lo != 1 else ''}")
        if hi is not None:
            out.append(f"at most {hi} items")
    if schema.get("uniqueItems"):
        out.append("no repeats")
    if schema.get("minLength", 0) > 1 or "maxLength" in schema:
        out.append(f"{schema.get('minLength', 0)} to {schema.get('maxLength', '…')} characters")
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    for key, phrase in (("minimum", "each ≥ {}"), ("maximum", "each ≤ {}")):
        if key in items:
            out.append(phrase.format(_literal(items[key])))
    if schema.get("x-sensitive") is True:
        out.append("sensitive: never shown or recorded in plain text")
    return out


def param_lines(schema: dict, total: int | None = None) -> list[str]:
    """One block per parameter: `name: type; required|default X (limits)`, then its description, indented."""
    required = set(schema.get("required") or [])
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        head = type_text(sub)
        limits = limits_text(sub)
        if limits:
            head += f" ({', '.join(limits)})"
        if name in required:
            head += "; required"
        elif "default" in sub:
            head += f"; default {_default(sub['default'])}"
        else:
            head += "; optional"
        if out:
            out.append("")
        out += wrap(head, indent=4, first=f"  {name}: ", total=total)
        if sub.get("description"):
            out += wrap(" ".join(str(sub["description"]).split()), indent=6, total=total)
    return out


def _default(value: Any) -> str:
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value)


def show_lines(manifest, schema: dict, examples: list[str], total: int | None = None,
               on_path: dict[str, bool] | None = None) -> list[str]:
    """`on_path`: tool name -> whether this machine has it (looked up by the caller); None says nothing."""
    m = manifest
    out = wrap(f"{m.id} {m.version} — {m.title} ({m.trust})", indent=2, first="", total=total)
    out += wrap(" ".join(str(m.description).split()), total=total)
    if m.tags:
        out += wrap(", ".join(m.tags), indent=6, first="tags: ", total=total)
    out += ["", "Tools (programs it runs besides Python)"] + tool_lines(m.tools, on_path, total=total)
    out += ["", "Parameters"] + param_lines(schema, total=total)
    out += ["", "Outputs"]
    for name, o in m.outputs.items():
        out += wrap(f"{o.path} ({o.type})", indent=4, first=f"  {name}: ", total=total)
        if o.description:
            out += wrap(" ".join(str(o.description).split()), indent=6, total=total)
    if examples:
        out += ["", "Examples"] + [f"  {e}" for e in examples]
    return out


def tools_text(tools) -> str:
    """'bwa, samtools, bcftools', or 'none' (for `snakegate list`)."""
    return ", ".join(t.name for t in tools) or "none"


def tool_lines(tools, on_path: dict[str, bool] | None = None, total: int | None = None) -> list[str]:
    """One entry per external tool a workflow declares (workflow.yaml `tools:`): its name, whether this machine
    has it, and the command that installs it; the gate refuses a run while one is missing."""
    if not tools:
        return wrap("none: its steps run on Python and the packages installed with snakegate", indent=4,
                    first="  ", total=total)
    out = []
    for tool in tools:
        here = "" if on_path is None else "found on PATH; " if on_path.get(tool.name) else "not on PATH here; "
        out += wrap(f"{here}install with {tool.install}", indent=4, first=f"  {tool.name}: ", total=total)
    return out + wrap("The gate refuses a run while a tool is missing, naming the command that installs it.",
                      indent=2, first="  ", total=total)


def connection_lines(consumers: dict, producers: dict, total: int | None = None) -> list[str]:
    """`Connects to`: per output, the workflows that can take it (`consumer.param`); `Takes from`: per input
    file, the workflows that can make it (`producer.output`); by declared type (snakegate.registry.links)."""
    out = ["", "Connects to (its outputs as another workflow's input)"]
    for output, found in consumers.items():
        shown = ", ".join(f"{link.consumer}.{link.param}" for link in found) or "none"
        out += wrap(shown, indent=4, first=f"  {output} → ", total=total)
    out += ["", "Takes from (workflows that make its input files)"]
    if not producers:
        out.append("  (it takes no input file)")
    for param, found in producers.items():
        shown = ", ".join(f"{link.producer}.{link.output}" for link in found) or "none"
        out += wrap(shown, indent=4, first=f"  {param} ← ", total=total)
    return out
