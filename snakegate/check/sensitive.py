"""Proof: where a sensitive param reaches a rule's `shell:` or `params:`, say so (a warning).

Snakemake writes each job's params and shell command into `.snakemake/metadata/`
and prints the command when the job fails (and always with `--printshellcmds`).
A run scrubs the value from its logs and from those records when it ends
(snakegate.provenance.runrecords), but while it runs they hold it in plain text, and
plain `snakemake` prints the command on the terminal. A value read where Snakemake
records nothing (`snakemake.config[...]` in a script, `config[...]` in a `run:`
block) stays out of them. A read counts when it names the sensitive value, something
inside it, or an object that holds it (`config["service"]` with `service.password`
sensitive). Pure: the reader's config reads and rule literals in, findings out.
"""

from __future__ import annotations

from snakegate.check.facts import Finding, WorkflowFacts, declared_paths

CODE = "sensitive_in_command"


def _sensitive(schema: dict) -> list[tuple]:
    return [path for path, sub in declared_paths(schema).items()
            if isinstance(sub, dict) and sub.get("x-sensitive") is True]


def _touches(read: tuple, secret: tuple) -> bool:
    """The read names the secret, something below it, or an object holding it."""
    n = min(len(read), len(secret))
    return bool(read) and read[:n] == secret[:n]


def sensitive_findings(f: WorkflowFacts) -> list[Finding]:
    if f.source is None or not isinstance(f.schema, dict):
        return []
    secrets = _sensitive(f.schema)
    if not secrets:
        return []
    rules = {rule.name: rule for rule in f.source.rules}
    out: list[Finding] = []
    seen: set[tuple] = set()
    for read in f.source.reads:
        rule = rules.get(read.rule or "")
        if rule is None or read.how != "config":
            continue
        hit = next((s for s in secrets if _touches(read.path, s)), None)
        if hit is None:
            continue
        where = _directive(rule, read)
        if where is None or (rule.name, hit, where) in seen:
            continue
        seen.add((rule.name, hit, where))
        name = ".".join(hit)
        out.append(Finding(
            "warning", f.id, CODE,
            f"sensitive param `{name}` reaches the {where}: of rule `{rule.name}`: Snakemake records every "
            "job's params and shell command in .snakemake/metadata/ and prints the command when the job fails, "
            "so the value lies there in plain text until the run ends and snakegate scrubs it (and on the "
            "terminal of a plain `snakemake`)",
            hint=f"read it where Snakemake records nothing: snakemake.config[{hit[0]!r}] in a script: or "
                 f"config[{hit[0]!r}] inside a run: block; or drop x-sensitive if it is no secret",
            rule=rule.name, file=read.file, line=read.line))
    return out


def _directive(rule, read) -> str | None:
    """"shell" or "params" when the read sits in that directive of the rule (a literal of it on the read's
    line: the key string of `config["k"]`, or the shell text holding `{config[k]}`), else None."""
    for kind, text, line in rule.literals:
        if line != read.line:
            continue
        if kind == "shellcmd" and "{config" in text:
            return "shell"
        if kind == "params" and text == read.path[-1]:
            return "params"
    return None
