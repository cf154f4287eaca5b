"""Run config templates (`snakegate init`): every parameter with its default and its description as a comment."""

from __future__ import annotations

import io
import textwrap

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from snakegate.registry import Workflow
from snakegate.runconfig import parse_yaml


def _example_params(wf: Workflow) -> dict:
    for path in wf.examples():
        data, err = parse_yaml(path.read_text(encoding="utf-8"), str(path))
        if err is None and isinstance(data, dict) and isinstance(data.get("params"), dict):
            return data["params"]
    return {}


def run_config_template(wf: Workflow, registry_root) -> str:
    schema = wf.schema
    required = set(schema.get("required", []))
    example = _example_params(wf)
    params = CommentedMap()
    for name, sub in (schema.get("properties") or {}).items():
        if "default" in sub:
            params[name] = sub["default"]
            note = ""
        elif name in example:
            params[name] = example[name]
            note = "REQUIRED (value from an example; change it). "
        elif name in required:
            params[name] = None
            note = "REQUIRED: fill in. "
        else:
            continue  # optional without default: listed in the header comment instead
        desc = " ".join(sub.get("description", "").split())
        allowed = f" One of: {', '.join(map(str, sub['enum']))}." if "enum" in sub else ""
        comment = textwrap.shorten(note + desc + allowed, width=400, placeholder="…")
        params.yaml_set_comment_before_after_key(name, before=textwrap.fill(comment, 86), indent=2)
    doc = CommentedMap()
    doc["workflow"] = wf.id
    doc["version"] = wf.manifest.version
    doc["params"] = params
    optional = [n for n, s in (schema.get("properties") or {}).items() if n not in params]
    header = [f"Run config for {wf.id} {wf.manifest.version}: {wf.manifest.title}",
              "Validate with `snakegate validate <this file>`; run with `snakegate run <this file>`."]
    if optional:
        header.append("Optional params you may add: " + ", ".join(optional) + f" (see `snakegate show {wf.id}`).")
    doc.yaml_set_start_comment("\n".join(header))
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 100
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue()
