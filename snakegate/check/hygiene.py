"""Hygiene (warnings only): `snakemake --lint`, snakefmt and declared tools missing from PATH. Pure."""

from __future__ import annotations

from snakegate.check.facts import Finding, WorkflowFacts

# Lints that do not apply to this registry: its workflows run inside snakegate's own
# environment (their scientific libraries are snakegate dependencies), not per-rule conda envs.
IGNORED_LINTS = ("Specify a conda environment or container for each rule.",)


# What to change, for the lints whose own text leaves it to the reader (matched on the start of the title).
LINT_HINTS = (
    ("Path composition with '+'", "write the path as one string on that line, or as an f-string "
                                  "(f\"{prefix}/name.ext\") if it must be composed"),
    ("Absolute path", "make the path relative to the working directory, or pass the file in through an "
                      "x-artifact param"),
)
LINT_DOCS = "see `snakemake --lint` and https://snakemake.readthedocs.io/en/stable/snakefiles/best_practices.html"


def hygiene_findings(f: WorkflowFacts) -> list[Finding]:
    out = []
    for lint in f.lints:
        title = lint["title"]
        hint = next((h for start, h in LINT_HINTS if title.startswith(start)), None)
        out.append(Finding("warning", f.id, "lint", f"{title} {lint.get('body') or ''}".strip(),
                           rule=lint.get("rule"), file=lint.get("file"), line=lint.get("line"),
                           hint=f"{hint}; {LINT_DOCS}" if hint else LINT_DOCS))
    for diff in f.format_diffs:
        out.append(Finding("warning", f.id, "format",
                           f"{diff['file']} is not formatted as snakefmt formats it ({diff['changed']} line(s) differ"
                           + (f", first: {diff['excerpt']}" if diff.get("excerpt") else "") + ")",
                           file=diff["file"], line=diff.get("line"), hint=f"run `snakefmt {diff['file']}`"))
    for tool in f.missing_tools:
        out.append(Finding("warning", f.id, "tool_missing",
                           f"declared tool `{tool['name']}` is not on PATH here, so this workflow cannot be run or "
                           "tested on this machine",
                           file=f"{f.rel}/workflow.yaml",
                           hint=f"install it: `{tool['install']}` (or load its module) before `snakegate test {f.id}`"))
    return out
