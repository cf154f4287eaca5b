"""Proof 3, typed edges: on every DAG edge (job -> job, param -> job, job -> declared output) both ends have
the same declared artifact type, every type named in workflow.yaml is a known one, and an unnamed input or output
(typed by position, `_1`, `_2`, ...) is reported once per rule; one that cannot be typed by position (several
expand()s make a varying number of files) is an error for the curated tier and a warning for community ones.
Pure: facts in, findings out.
"""

from __future__ import annotations

import os

from snakegate import metaschemas
from snakegate.check.facts import (
    Finding, WorkflowFacts, artifacts_of, checkpoints, name_of, positional_names, show,
)
from snakegate.contract.dialect import did_you_mean
from snakegate.contract.outputs import PatternError, expand_outputs


def type_findings(f: WorkflowFacts) -> list[Finding]:
    """Every artifact type workflow.yaml names is one of the registry's (the built-in ones and its own);
    `a|b` lets one input take either type (an expand() over extensions)."""
    if f.manifest is None or f.manifest_problems:
        return []
    known = sorted(metaschemas.artifact_types())
    used = [(f"rules.{rule}.{kind}.{name}", t, rule) for rule, io in sorted((f.manifest.get("rules") or {}).items())
            for kind in ("input", "output") for name, t in sorted(((io or {}).get(kind) or {}).items())]
    used += [(f"outputs.{name}.type", d.get("type"), None) for name, d in sorted((f.manifest.get("outputs") or {}).items())]
    out = []
    for where, type_name, rule in used:
        if isinstance(type_name, str) and all(part in known for part in type_name.split("|")):
            continue  # "html|zip": one unnamed input that takes files of either type
        if type_name not in known:
            close = did_you_mean(type_name, known)
            out.append(Finding("error", f.id, "unknown_artifact_type",
                               f"{where} is `{type_name}`, which is not an artifact type of this registry",
                               rule=rule, file=f"{f.rel}/workflow.yaml",
                               hint=(f"did you mean `{close}`? " if close else "")
                               + f"known types: {', '.join(known)} (`snakegate types` lists them; a registry adds its own "
                               "in snakegate.toml [types.<name>])"))
    return out


def edge_findings(f: WorkflowFacts) -> list[Finding]:
    """On every DAG edge (job -> job, param or sample-sheet file -> job, job -> declared output) the types agree."""
    if f.manifest is None or f.manifest_problems or f.schema is None:
        return []
    declared = f.manifest.get("rules") or {}
    manifest_file = f"{f.rel}/workflow.yaml"
    out: list[Finding] = []
    seen: set[tuple] = set()

    def untyped(rule, kind, name, file, detail):
        if (rule, kind, name) in seen:
            return  # an unnamed or untyped input/output is reported once per rule, not once per job
        seen.add((rule, kind, name))
        if name is None:  # unknown, not wrong: an error for curated, a warning for community (multiqc's inputs)
            curated = f.trust == "curated"
            out.append(Finding("error" if curated else "warning", f.id, "io_name_unknown",
                               f"rule `{rule}` {'reads' if kind == 'input' else 'writes'} {show(file, f)} {detail} "
                               f"through an unnamed {kind} that cannot be typed by position (its arguments make a "
                               "varying number of files), so the edge's types are not checked ("
                               f"{'an error' if curated else 'a warning'} for the {f.trust} tier)",
                               rule=rule, file=f.snakefile,
                               hint=f"name the {kind} ({kind}: <name>=...) and give <name> a type under "
                                    f"rules.{rule}.{kind} in workflow.yaml"))
            return
        what = f"unnamed {kind} {name}" if name.startswith("_") else f"{kind} `{name}`"
        out.append(Finding("error", f.id, "io_name_unknown",
                           f"{what} of rule `{rule}` ({show(file, f)} {detail}) has no type in workflow.yaml",
                           rule=rule, file=manifest_file, hint=f"add `{name}: <type>` under rules.{rule}.{kind}"))

    def io_name(job, kind, file):
        named = name_of(job.named_input if kind == "input" else job.named_output, file)
        return named if named is not None else positional_names(f, job, kind).get(file)

    for ex in f.examples:
        if ex.dag is None or ex.resolved_params is None:
            continue
        arts = artifacts_of(f.schema, ex.resolved_params)
        gates = set(checkpoints(ex.dag))
        by_output: dict[str, tuple[str, str | None]] = {}
        jobs = {id(j): j for j in ex.dag.jobs}
        for job in ex.dag.jobs:
            for file in job.output:
                by_output[file] = (job.rule, id(job))
        for job in ex.dag.jobs:
            if not job.output or job.rule not in declared:
                continue  # target rules carry no types; undeclared rules are reported by rule_findings
            in_types = (declared[job.rule] or {}).get("input") or {}
            for file in job.input:
                norm = os.path.normpath(file)
                if file in job.producers:
                    producer = job.producers[file]
                    if producer not in declared or file not in by_output:
                        continue
                    out_name = io_name(jobs[by_output[file][1]], "output", file)
                    out_types = (declared[producer] or {}).get("output") or {}
                    source = f"from rule `{producer}`"
                    if out_name is None or out_name not in out_types:
                        untyped(producer, "output", out_name, file, "for rule `" + job.rule + "`")
                        continue
                    source_type, source_text = out_types[out_name], f"output {out_name} of rule `{producer}`"
                elif norm in arts:
                    param, source_type = arts[norm]
                    source, source_text = f"from param `{param}`", f"x-artifact param `{param}`"
                elif norm in ex.sheet_inputs:
                    key, source_type = ex.sheet_inputs[norm]
                    source, source_text = f"from sample sheet {key}", f"sample-sheet column {key}"
                else:
                    continue  # a hidden input, reported by io_findings
                in_name = io_name(job, "input", file)
                if in_name is None or in_name not in in_types:
                    untyped(job.rule, "input", in_name, file, source)
                    continue
                behind_gate = job.producers.get(file) in gates  # stands for a checkpoint's output until it runs
                if source_type not in in_types[in_name].split("|") and not behind_gate:
                    key = (job.rule, in_name, source_text)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(Finding("error", f.id, "edge_type_mismatch",
                                       f"{source_text} is {source_type} but input {in_name} of rule `{job.rule}` "
                                       f"that reads it ({show(file, f)}) is declared {in_types[in_name]}",
                                       rule=job.rule, file=manifest_file,
                                       hint="make both ends of the edge the same artifact type in workflow.yaml "
                                            "(and schema.json x-artifact), or convert the file in a rule between them"))
        try:
            outputs = expand_outputs(f.manifest.get("outputs") or {}, ex.resolved_params, f.schema)
        except (PatternError, OSError, KeyError):
            outputs = []  # reported by ruleio
        for name, path, type_name in sorted(outputs):
            hit = by_output.get(path) or by_output.get(os.path.normpath(path))
            if hit is None or hit[0] not in declared:
                continue
            rule, job_id = hit
            out_name = io_name(jobs[job_id], "output", path if path in jobs[job_id].output else os.path.normpath(path))
            out_types = (declared[rule] or {}).get("output") or {}
            if out_name is None or out_name not in out_types:
                untyped(rule, "output", out_name, path, f"(declared output `{name}`)")
            elif out_types[out_name] != type_name and (name, rule) not in seen:
                seen.add((name, rule))
                out.append(Finding("error", f.id, "edge_type_mismatch",
                                   f"declared output `{name}` is {type_name} but rule `{rule}` writes it as output "
                                   f"{out_name} declared {out_types[out_name]}", rule=rule, file=manifest_file,
                                   hint=f"make outputs.{name}.type and rules.{rule}.output.{out_name} the same type"))
    return out
