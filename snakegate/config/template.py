"""Run config templates (`snakegate init`): every parameter with its default and its description as a comment.

Every value is written by `snakegate.config.write.dump_config`, the one writer
of run configs, so the template means to Snakemake exactly what it shows
(a default `"no"` stays the text `no`); the comments are added around it.
No files are written here.
"""

from __future__ import annotations

import textwrap

from snakegate.config.write import dump_config
from snakegate.registry.workflows import Workflow
from snakegate.config.read import read_run_config


def _example_params(wf: Workflow) -> dict:
    for path in wf.examples():
        data, err = read_run_config(path)
        if err is None and isinstance(data, dict) and isinstance(data.get("params"), dict):
            return data["params"]
    return {}


def _comment(text: str, indent: str = "") -> str:
    return "".join(f"{indent}# {line}\n" for line in text.splitlines())


def run_config_template(wf: Workflow, registry_root) -> str:
    schema = wf.schema
    required = set(schema.get("required", []))
    example = _example_params(wf)
    header = [f"Run config for {wf.id} {wf.manifest.version}: {wf.manifest.title}",
              "Validate with `snakegate validate <this file>`; run with `snakegate run <this file>`."]
    entries = []
    for name, sub in (schema.get("properties") or {}).items():
        if "default" in sub:
            value, note = sub["default"], ""
        elif name in example:
            value, note = example[name], "REQUIRED (value from an example; change it). "
        elif name in required:
            value, note = None, "REQUIRED: fill in. "
        else:
            continue  # optional without default: listed in the header comment instead
        desc = " ".join(sub.get("description", "").split())
        allowed = f" One of: {', '.join(map(str, sub['enum']))}." if "enum" in sub else ""
        comment = textwrap.shorten(note + desc + allowed, width=400, placeholder="…")
        entries.append(_comment(textwrap.fill(comment, 86), "  ")
                       + textwrap.indent(dump_config({name: value}), "  "))
    listed = {name for name, sub in (schema.get("properties") or {}).items()
              if "default" in sub or name in example or name in required}
    optional = [n for n in (schema.get("properties") or {}) if n not in listed]
    if optional:
        header.append("Optional params you may add: " + ", ".join(optional) + f" (see `snakegate show {wf.id}`).")
    return (_comment("\n".join(header))
            + dump_config({"workflow": wf.id}) + dump_config({"version": wf.manifest.version})
            + ("params:\n" + "".join(entries) if entries else "params: {}\n"))
