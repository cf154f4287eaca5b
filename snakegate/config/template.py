"""Run config templates (`snakegate init`): every parameter with its description as a comment; the required
ones as values, the optional ones commented out with their default.

Every value is written by `snakegate.config.write.dump_config`, the one writer
of run configs, so the template means to Snakemake exactly what it shows
(a default `"no"` stays the text `no`); the comments are added around it.

`plan_template` (`snakegate init --plan a,b`) writes a plan: every param of
each step, the required ones as values (an example's, else to fill in), the
optional ones commented out with their default and description, and the
`{from, output}` edges filled where an earlier step (the nearest first) has an
output whose type fits a later step's file param (its first fitting output, in
declared order, by `snakegate.registry.links`), with a comment naming the other
outputs that would fit; a param naming columns of such an input is written out
with what those columns will be. No files are written here.
"""

from __future__ import annotations

import textwrap

from snakegate.config.write import dump_config
from snakegate.registry import links
from snakegate.registry.workflows import Workflow
from snakegate.config.read import read_run_config

RUN_COMMENT = (76, 2000)  # a run template's comments: "  # " + 76 = 80 columns; descriptions whole


def _example_params(wf: Workflow) -> dict:
    for path in wf.examples():
        data, err = read_run_config(path)
        if err is None and isinstance(data, dict) and isinstance(data.get("params"), dict):
            return data["params"]
    return {}


def run_config_template(wf: Workflow, registry_root) -> str:
    """One workflow's run config: the required params as values (an example's, else to fill in), every other
    param commented out with its default (or an example's value) and its description; comments fit 80
    columns."""
    schema = wf.schema
    required = set(schema.get("required", []))
    example = _example_params(wf)
    header = [f"Run config for {wf.id} {wf.manifest.version}: {wf.manifest.title}",
              "Check it with `snakegate validate <this file>`,",
              "then run it with `snakegate run <this file>`.",
              "Optional params are commented out with their default: uncomment one to",
              "change it."]
    entries, values = "", 0
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        if name in required:
            if "default" in sub:
                value, note = sub["default"], "REQUIRED. "
            elif name in example:
                value, note = example[name], "REQUIRED (value from an example; change it). "
            else:
                value, note = None, "REQUIRED: fill in. "
            entries += ("\n" if entries else "") + _commented(_about(note, sub, *RUN_COMMENT), "  ")
            entries += textwrap.indent(dump_config({name: value}), "  ")
            values += 1
            continue
        note = f"Optional, default {_default_text(sub)}. " if "default" in sub else "Optional, no default. "
        shown = dump_config({name: sub["default"]}) if "default" in sub else \
            dump_config({name: example[name]}) if name in example else f"{name}:\n"
        entries += ("\n" if entries else "") + _commented(_about(note, sub, *RUN_COMMENT), "  ") + _commented(shown, "  ")
    return (_commented("\n".join(header), "")
            + dump_config({"workflow": wf.id}) + dump_config({"version": wf.manifest.version})
            + "params:\n" + entries + ("" if values else "  {}\n"))


# ---- plans ---------------------------------------------------------------------------------------
def _commented(text: str, indent: str) -> str:
    return "".join(f"{indent}# {line}\n" for line in text.splitlines())


def _about(note: str, sub: dict, width: int = 84, limit: int = 400) -> str:
    desc = " ".join(str(sub.get("description", "")).split())
    allowed = f" One of: {', '.join(map(str, sub['enum']))}." if "enum" in sub else ""
    return textwrap.fill(textwrap.shorten(note + desc + allowed, width=limit, placeholder="…"), width)


def _edge(steps: list[tuple[str, Workflow]], at: int, param: str) -> tuple[links.Link | None, str, list[str]]:
    """The edge a step's file param takes: the nearest earlier step's first fitting output (declared
    order), its step name, and every other earlier output that would fit (as `step.output`)."""
    chosen, source, others = None, "", []
    for name, wf in reversed(steps[:at]):
        for link in links.links_between(wf, steps[at][1]):
            if link.param != param or not link.one_file:
                continue
            if chosen is None:
                chosen, source = link, name
            else:
                others.append(f"{name}.{link.output}")
    return chosen, source, others


def _step_entries(steps: list[tuple[str, Workflow]], at: int) -> str:
    name, wf = steps[at]
    schema = wf.schema
    required = set(schema.get("required", []))
    example = _example_params(wf)
    edges = {}
    for param in links.inputs(schema):
        link, source, others = _edge(steps, at, param)
        if link is not None:
            edges[param] = (link, source, others)
    column_of = {c: p for p in edges for c in links.column_params(schema, p)}
    out = ""
    for param, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        if param in edges:
            link, source, others = edges[param]
            note = (f"From step `{source}`: its output `{link.output}` ({link.output_type})"
                    + (f", made only when {', '.join(f'{k} is {v}' for k, v in link.when.items())}" if link.when else "")
                    + (f"; also fits: {', '.join(others)}" if others else "") + ". ")
            out += _commented(_about(note, sub), "      ")
            out += textwrap.indent(dump_config({param: {"from": source, "output": link.output}}), "      ")
            continue
        if param in column_of:
            link, source, _ = edges[column_of[param]]
            what = link.columns or "its columns are not declared"
            note = (f"CHECK: must name columns of step `{source}`'s output `{link.output}`: {what}. "
                    + ("REQUIRED. " if param in required else
                       f"Optional, default {_default_text(sub)}. " if "default" in sub else "Optional. "))
            value = sub["default"] if "default" in sub else example.get(param)
            out += _commented(_about(note, sub), "      ")
            if value is None and param not in required and param not in example:
                # optional without a default (feature_columns: every column): written as null it would be refused
                out += _commented(f"{param}:\n", "      ")
            else:
                out += textwrap.indent(dump_config({param: value}), "      ")
            continue
        if param in required and "default" not in sub:
            value = example.get(param)
            note = "REQUIRED (value from an example; change it). " if param in example else "REQUIRED: fill in. "
            out += _commented(_about(note, sub), "      ")
            out += textwrap.indent(dump_config({param: value}), "      ")
            continue
        note = f"Optional, default {_default_text(sub)}. " if "default" in sub else "Optional, no default. "
        out += _commented(_about(note, sub), "      ")
        shown = dump_config({param: sub["default"]}) if "default" in sub else \
            dump_config({param: example[param]}) if param in example else f"{param}:\n"
        out += _commented(shown, "      ")
    return out


def _default_text(sub: dict) -> str:
    value = sub.get("default")
    return dump_config({"v": value})[3:].strip() if not isinstance(value, (dict, list)) or not value else \
        " ".join(dump_config({"v": value}).split()[1:])


def plan_template(steps: list[tuple[str, Workflow]]) -> str:
    """A plan config template for `steps` ((step name, workflow), in run order); see the module docstring."""
    chain = " -> ".join(f"{name} ({wf.id} {wf.manifest.version})" for name, wf in steps)
    header = [f"Plan: {chain}",
              "Validate with `snakegate validate <this file>`; run with `snakegate run <this file>`.",
              "A param taken from an earlier step is {from: <step>, output: <output>}; `snakegate show <id>` lists",
              "what each workflow takes and makes, and which workflows connect to it.",
              "Optional params are commented out with their default: uncomment one to change it."]
    body = ""
    for at, (name, wf) in enumerate(steps):
        body += (f"  {name}:\n    workflow: {wf.id}\n" + textwrap.indent(dump_config({"version": wf.manifest.version}),
                                                                         "    ")
                 + "    params:\n")
        entries = _step_entries(steps, at)
        body += entries if any(not line.lstrip().startswith("#") for line in entries.splitlines()) else \
            entries + "      {}\n"
    return _commented("\n".join(header), "") + "# plan: <a short label>\nsteps:\n" + body
