"""Proof: a rule's script reads only the params its rule defines.

A Python script reading `snakemake.params.alpha` (or `["alpha"]`, `.get("alpha")`), or an R script reading
`snakemake@params[["alpha"]]` / `snakemake@params$alpha`, of a rule without `params: alpha=...` fails inside
the job (AttributeError, or NULL carried on in R) after the gate has passed and other jobs have run. Named
with the rule's own names and the closest one. A script shared by rules is held to each. A rule whose params
the reader cannot list (`params: **mapping`, a module's rule that `use rule ... with:` may extend) is left
out: unknown is not an error. Pure: facts in, findings out.
"""

from __future__ import annotations

from snakegate.check.facts import Finding, WorkflowFacts
from snakegate.contract.dialect import did_you_mean

CODE = "script_param_unknown"


def script_param_findings(f: WorkflowFacts) -> list[Finding]:
    if f.source is None:
        return []
    out = []
    modules = {snakefile for _name, snakefile, *_ in f.source.modules}
    for script in f.source.scripts:
        rule = f.source.rule(script.rule)
        # params: **mapping, or a module's rule (`use rule ... with: params:` may add names): not provable here
        if rule is None or not script.params_read or rule.params_unpacked or rule.file in modules:
            continue
        seen = set()
        for name, line in script.params_read:
            if name in rule.params or name in seen:
                continue
            seen.add(name)
            close = did_you_mean(name, rule.params)
            has = ", ".join(rule.params) or "none"
            out.append(Finding("error", f.id, CODE,
                               f"{script.file} reads params `{name}`, but rule `{rule.name}` defines no param "
                               f"`{name}` (its params: {has}), so the job fails when it reaches that line",
                               rule=rule.name, file=script.file, line=line,
                               hint=(f"did you mean `{close}`? " if close else "")
                               + f"add `{name}=...` under params: of rule `{rule.name}`, or read a param it defines"))
    return out
