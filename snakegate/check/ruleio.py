"""Proof 2, rule IO and hidden inputs: every x-artifact param is some job's input, every declared output is
produced, no job reads a file that is neither made upstream nor given by the contract (a param or a sample-sheet
path column) nor shipped in the workflow folder, and every rule with outputs is declared in workflow.yaml.

With checkpoints, jobs after a checkpoint exist only once it has run: what the DAG cannot show is reported as
not statically checked (a warning), never as a false error. Pure: facts in, findings out.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from snakegate.check.examples import HIDDEN_HINT
from snakegate.check.facts import (
    Finding, WorkflowFacts, artifacts_of, checkpoints, inside, positional_names, rel_file, rule_line, show,
)
from snakegate.contract.outputs import PatternError, expand_outputs
from snakegate.contract.dialect import did_you_mean


def io_findings(f: WorkflowFacts) -> list[Finding]:
    """Per example DAG: artifacts consumed, declared outputs produced, no hidden inputs."""
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    out = []
    for ex in f.examples:
        if ex.dag is None or ex.resolved_params is None:
            continue
        label = PurePosixPath(ex.name).name
        arts = artifacts_of(f.schema, ex.resolved_params)
        consumed = {os.path.normpath(x) for x in ex.dag.consumed()}
        produced = {os.path.normpath(x) for x in ex.dag.produced()}
        at_parse = {k[0] for k in (f.source.tables if f.source else [])} | {
            name for name, sub in (f.schema.get("properties") or {}).items() if "x-sample-sheet" in sub}
        for path, (param, _type) in sorted(arts.items(), key=lambda kv: kv[1]):
            if param in at_parse:
                continue  # a sample sheet read when the Snakefile loads (pandas): pinned by the gate, not a job input
            if path not in consumed:
                top = param.split(".")[0].split("[")[0]
                readers = sorted({r.rule for r in (f.source.reads if f.source else []) if r.path[0] == top and r.rule})
                how = f"; rule `{readers[0]}` reads it from config but not as an input" if readers else ""
                where, line = rule_line(f, ex.dag, readers[0]) if readers else (f.snakefile, None)
                out.append(Finding("error", f.id, "artifact_not_consumed",
                                   f"x-artifact param `{param}` is not an input of any job{how} (with {label})",
                                   rule=readers[0] if readers else None, file=where, line=line,
                                   hint=f"name it in the input: of the rule that reads it (input: "
                                        f"{top}=config[{top!r}]), so Snakemake tracks the file and reruns the rule "
                                        "when it changes"))
        gates = checkpoints(ex.dag)
        try:
            declared = expand_outputs(f.manifest.get("outputs") or {}, ex.resolved_params, f.schema)
        except (PatternError, OSError, KeyError) as exc:
            out.append(Finding("error", f.id, "output_not_produced",
                               f"a declared output path cannot be expanded from the params: {exc} (with {label})",
                               file=f"{f.rel}/workflow.yaml",
                               hint="use {param} placeholders that name params (or {sheet.column} of a sample sheet)"))
            declared = []
        for name, path, _type in sorted(declared):
            if os.path.normpath(path) in produced:
                continue
            if gates:
                out.append(Finding("warning", f.id, "not_statically_checked",
                                   f"declared output `{name}` ({path}) is not in the DAG before checkpoint "
                                   f"{', '.join(f'`{g}`' for g in gates)} runs, so it is not statically checked "
                                   f"(with {label})", file=f"{f.rel}/workflow.yaml",
                                   hint="`snakegate test` proves it by running the workflow"))
                continue
            out.append(Finding("error", f.id, "output_not_produced",
                               f"declared output `{name}` ({path}) is not produced by any job (with {label})",
                               file=f"{f.rel}/workflow.yaml",
                               hint=f"make a rule write {path} and request it from the first rule (rule all), "
                                    f"or correct outputs.{name}.path in workflow.yaml"))
        for job in ex.dag.jobs:
            for file in job.input:
                norm = os.path.normpath(file)
                if file in job.producers or norm in arts or norm in ex.sheet_inputs or inside(norm, f.folder):
                    continue  # made upstream, given by a param or a sample sheet, or shipped in the workflow folder
                where, line = rule_line(f, ex.dag, job.rule)
                out.append(Finding("error", f.id, "hidden_input",
                                   f"rule `{job.rule}` reads {show(file, f)}, which no job produces and neither an x-artifact "
                                   f"param nor a sample sheet names (a hidden input, with {label})", rule=job.rule,
                                   file=where, line=line, hint=HIDDEN_HINT))
    return out


def rule_findings(f: WorkflowFacts) -> list[Finding]:
    """Every rule with outputs is declared, and every declared IO name exists on its rule."""
    dags = [ex.dag for ex in f.examples if ex.dag is not None]
    if f.manifest is None or f.manifest_problems or not dags:
        return []
    declared = f.manifest.get("rules") or {}
    rules = dags[0].rules
    manifest_file = f"{f.rel}/workflow.yaml"
    out = []
    for name, info in sorted(rules.items()):
        has_output = info.get("has_output") or any(j.output for d in dags for j in d.jobs if j.rule == name)
        if has_output and name not in declared:
            file = rel_file(info.get("snakefile"), f)
            line = f.source.source_line(file, info.get("lineno")) if f.source else None
            out.append(Finding("error", f.id, "rule_not_declared",
                               f"rule `{name}` has outputs but is not declared under `rules:` in workflow.yaml",
                               rule=name, file=file, line=line,
                               hint=f"add `{name}: {{input: {{<name>: <type>}}, output: {{<name>: <type>}}}}` "
                                    "to rules: in workflow.yaml"))
    for name, io in sorted(declared.items()):
        if name not in rules:
            close = did_you_mean(name, list(rules))
            out.append(Finding("error", f.id, "io_name_unknown",
                               f"workflow.yaml declares rule `{name}`, which the Snakefile does not define",
                               rule=name, file=manifest_file,
                               hint=f"did you mean `{close}`?" if close else "remove it or rename it to a rule of the Snakefile"))
            continue
        static = f.source.rule(name) if f.source else None
        for kind in ("input", "output"):
            known = set(rules[name].get(kind) or [])
            # positional arguments as written: a rule with no job in these DAGs (one no target requests) has them too
            count = (static.unnamed_input if kind == "input" else static.unnamed_output) if static else 0
            known.update(f"_{i}" for i in range(1, count + 1))
            for d in dags:  # names made by unpack() or input functions exist only per job; _1, _2: unnamed
                for job in d.jobs:
                    if job.rule == name:
                        known.update((job.named_input if kind == "input" else job.named_output).keys())
                        known.update(n for n in positional_names(f, job, kind).values() if n)
            for io_name in sorted((io or {}).get(kind) or {}):
                if io_name not in known:
                    close = did_you_mean(io_name, sorted(known))
                    out.append(Finding("error", f.id, "io_name_unknown",
                                       f"workflow.yaml declares {kind} `{io_name}` of rule `{name}`, but the rule "
                                       f"has no {kind} named `{io_name}` (it has: {', '.join(sorted(known)) or 'none'})",
                                       rule=name, file=manifest_file,
                                       hint=(f"did you mean `{close}`? " if close else "")
                                       + f"name the {kind} in the Snakefile ({kind}: {io_name}=...) or fix workflow.yaml"))
    return out


