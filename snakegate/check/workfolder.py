"""Proof: the workflow does not list its inputs by globbing the working folder.

`glob_wildcards("data/{book}.txt")` (or `glob.glob("*.csv")`) on a literal pattern lists files relative to
the folder Snakemake works in, whatever the params say. Started in its own project folder that finds the
project's data; on the registry path the working folder is the registry root, so the list holds whatever
lies there, or nothing — and no param names those files, so the gate never sees them. With nothing found the
DAG is silently empty and the other proofs only see the consequences (outputs not produced, IO names
unknown); this names the cause. Patterns built from config or from `workflow.source_path(...)` are not
literal and not reported. Pure: facts in, findings out.
"""

from __future__ import annotations

from snakegate.check.facts import Finding, WorkflowFacts

CODE = "working_folder_glob"


def glob_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    for file, line, pattern, rule in (f.source.globs if f.source else []):
        where = f"rule `{rule}`" if rule else "the Snakefile"
        out.append(Finding("error", f.id, CODE,
                           f"{where} lists files with a glob of `{pattern}` in the working folder (the registry "
                           "root on the registry path): what it finds there, or nothing, becomes the workflow's "
                           "inputs, and no param names them (a hidden input)",
                           rule=rule, file=file, line=line,
                           hint="take the list from a param: e.g. a mapping name -> file whose values are "
                                "x-artifact paths (\"books\": {\"a\": \"data/a.txt\"}), and read config[...] "
                                "where the glob was"))
    return out
