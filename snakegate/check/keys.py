"""Proof 1, config keys: every key the workflow reads is declared in schema.json, every declared param is read,
and the Snakefile validates its own config with Snakemake's validate().

Reads come from `snakegate.check.reading`: Snakefiles, included files, module
Snakefiles (mapped through the module's `config:`), `lookup(dpath=..., within=config)`
and `snakemake.config[...]` in scripts. Pure: facts in, findings out.
"""

from __future__ import annotations

import os

from snakegate.check.facts import (
    Finding, WorkflowFacts, declared_paths, is_open, key_text, properties, subschema, undeclared_at,
)
from snakegate.contract.dialect import did_you_mean, format_path

_HOW = {"lookup": "with lookup() ", "script": "by its script ", "module": "in a module Snakefile "}


def config_key_findings(f: WorkflowFacts) -> list[Finding]:
    if f.syntax_error is not None:
        message, file, line = f.syntax_error
        return [Finding("error", f.id, "dag_error", f"the Snakefile does not parse: {message}", file=file, line=line,
                        hint="fix the syntax on that line; `snakemake -s <Snakefile> -n` shows the same error")]
    if not f.has_snakefile:
        return [Finding("error", f.id, "dag_error", f"{f.rel} has no Snakefile (nor workflow/Snakefile)",
                        file=f"{f.rel}/Snakefile",
                        hint="every workflow folder needs a Snakefile that runs alone with plain Snakemake")]
    if f.source is None or f.schema is None:
        return []
    schema, src = f.schema, f.source
    out: list[Finding] = []
    for file, line, message in src.unfollowed:
        out.append(Finding("warning", f.id, "dynamic_config_access", message + "; its config reads are not checked",
                           file=file, line=line, hint="include files with a literal relative path"))
    reported = set()

    def undeclared(path: tuple, bad: int, how: str, read, by: str = "") -> None:
        key = path[: bad + 1]
        if (key, read.file, read.line) in reported:
            return
        reported.add((key, read.file, read.line))
        siblings = list(properties(subschema(schema, path[:bad]) or {}))
        close = did_you_mean(path[bad], siblings)
        where = _HOW.get(how, "") + (f"in rule `{read.rule}`" if read.rule else "outside any rule")
        out.append(Finding(
            "error", f.id, "undeclared_config_key",
            f"{key_text(path)} is read {where}{by} but schema.json declares no `{format_path(key)}`",
            rule=read.rule, file=read.file, line=read.line,
            hint=(f"did you mean `{close}`? " if close else "")
            + f"declare `{format_path(key)}` in schema.json (type, description, default) or stop reading it"))

    for read in sorted(src.reads, key=lambda r: (r.file, r.line or 0, r.path)):
        bad = undeclared_at(schema, read.path)
        if bad is not None:
            undeclared(read.path, bad, read.how, read)
    # config["a"][var] or lookup(dpath="a/{w}") reads `a` for certain, whatever the key below it is: an undeclared
    # `a` is an error like any other read (with lookup's default= the DAG builds without it, so nothing else says so)
    for d in sorted(src.dynamic, key=lambda d: (d.file, d.line or 0, d.prefix)):
        bad = undeclared_at(schema, d.prefix) if d.prefix else None
        if bad is not None:
            undeclared(d.prefix, bad, "config", d, by=f" by `{d.text}`")

    declared = declared_paths(schema)
    read_paths = {r.path for r in src.reads}
    maybe_prefixes = [d.prefix for d in src.dynamic]

    def is_read(path: tuple) -> bool:
        # reading a key reads its parents; reading a whole mapping reads every key below it;
        # a dynamic access below `path` (config["a"][var]) reads `path` itself
        return (any(r[: len(path)] == path or path[: len(r)] == r for r in read_paths)
                or any(p[: len(path)] == path for p in maybe_prefixes))

    def maybe_read(path: tuple) -> bool:
        return any(path[: len(p)] == p and len(path) > len(p) for p in maybe_prefixes)

    unused = [p for p in declared if not is_read(p)]
    for path in sorted(unused):
        if any(path[: len(q)] == q for q in unused if len(q) < len(path)):
            continue  # its parent is already reported
        name = format_path(path)
        if maybe_read(path):
            out.append(Finding("warning", f.id, "unused_param",
                               f"param `{name}` is never read by a literal key; it may be read by a dynamic config access",
                               file=f"{f.rel}/schema.json",
                               hint=f"read it as config[{path[-1]!r}] so the check can prove it is used"))
        else:
            out.append(Finding("error", f.id, "unused_param",
                               f"param `{name}` is declared in schema.json but no rule or function reads it",
                               file=f"{f.rel}/schema.json",
                               hint=f"pass it to the rule that needs it (params: {path[-1]}=config[{path[-1]!r}]; "
                                    "scripts get values through params:, never snakemake.config) "
                                    "or remove it from schema.json"))

    for d in sorted(src.dynamic, key=lambda d: (d.file, d.line or 0)):
        if d.prefix and undeclared_at(schema, d.prefix) is not None:
            continue  # its undeclared key is the error above
        parent = subschema(schema, d.prefix) if d.prefix else schema
        if d.prefix and is_open(parent):
            continue  # a free-form mapping: any key is declared
        where = f"in rule `{d.rule}`" if d.rule else "outside any rule"
        what = "uses the whole config" if d.whole else "reads a key that cannot be resolved statically"
        out.append(Finding("warning", f.id, "dynamic_config_access",
                           f"`{d.text}` {where} {what}, so snakegate cannot prove the key is declared",
                           rule=d.rule, file=d.file, line=d.line,
                           hint="read each param by a literal key (config[\"name\"]), or declare "
                                + (f"`{format_path(d.prefix)}` as a free-form mapping (additionalProperties)"
                                   if d.prefix else "the values in a mapping param")))
    return out


def validation_findings(f: WorkflowFacts) -> list[Finding]:
    """The Snakefile validates its own config with Snakemake's validate(), so a standalone run stops on bad
    params before any job. Against schema.json: proven; against another schema file of the workflow (the
    Snakemake-catalog layout, workflow/schemas/config.schema.yaml): a warning to keep the two in step."""
    if f.source is None:
        return []
    wanted = os.path.normpath(os.path.join(f.folder, "schema.json"))
    others = []
    for file, line, schema in f.source.validations:
        if schema is None:
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(os.path.join(f.root, file) if f.root else file), schema))
        if target == wanted:
            return []
        others.append((file, line, schema, target))
    inside = [o for o in others if o[3].startswith(os.path.normpath(f.folder) + os.sep)]
    if inside:
        file, line, schema, _ = inside[0]
        return [Finding("warning", f.id, "config_not_validated",
                        f"the Snakefile validates its config against {schema}, not against the contract schema.json; "
                        "a standalone run checks that schema only", file=file, line=line,
                        hint="keep the two in step, or validate against schema.json "
                             "(`validate(config, \"<path to schema.json>\")`)")]
    what = (f"validates its config against {', '.join(repr(o[2]) for o in others)}, not against the workflow's "
            "schema.json" if others else "does not validate its config")
    return [Finding("error", f.id, "config_not_validated", f"the Snakefile {what}, so a standalone run "
                    f"(snakemake -s {f.snakefile}) accepts any params and fails inside a job, or runs with wrong ones",
                    file=f.snakefile, line=1,
                    hint='add `from snakemake.utils import validate` and `validate(config, "schema.json")` near the '
                         "top of the Snakefile (the path is relative to the file that calls it)")]


def configfile_findings(f: WorkflowFacts) -> list[Finding]:
    """`configfile:` is honoured standalone and ignored on the registry path: say so, once per directive."""
    out = []
    for file, line, path in (f.source.configfiles if f.source else []):
        extra = [k for k in f.configfile_keys.get(path, []) if f.schema is not None and k not in properties(f.schema)]
        also = (f"; its keys {', '.join(f'`{k}`' for k in extra)} are not params of the contract, so a standalone "
                "run started in the workflow folder, which loads it, is refused by validate()" if extra else "")
        lacking = [k for k in ((f.schema or {}).get("required") or []) if path in f.configfile_keys
                   and k not in f.configfile_keys[path]]
        if lacking:  # hello-world's config.yaml names countries, not the cities table its contract requires
            also += (f"; it lacks the required params {', '.join(f'`{k}`' for k in lacking)}, so a standalone run "
                     "started in the workflow folder needs them with --config or --configfile")
        out.append(Finding("warning", f.id, "configfile_ignored",
                           f"`configfile: {path}` is ignored on the registry path (the gate hands the workflow its "
                           "params; Snakemake skips a module's configfile) and by snakegate check and test; a "
                           "standalone run loads it from the working directory and --configfile overrides it" + also,
                           file=file, line=line,
                           hint="nothing to fix: its values belong in examples/*.yaml and schema.json defaults"
                           + (" (run standalone with -d <another folder>, where it is not found)" if extra else "")))
    return out
