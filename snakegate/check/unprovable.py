"""Proof 5, what the check cannot prove, said out loud: code fetched at run time (`wrapper:`), a `conda:`
environment whose file is not in the workflow, downloads and URLs (in shell commands, scripts, params and
examples; downloads done by libraries in scripts, `snakegate.check.scriptscan`), absolute or hard-coded data
paths in scripts and shell commands (and paths a script builds from the working folder: `Path.cwd()`,
`open(f"data/{x}.csv")`), and scripts that draw random numbers without seeding (`snakegate.check.randomness`):
the same invocation would not give the same outputs. A URL in a shell comment or a script's docstring is a
citation, not a download, and is not reported. Scripts a `shell:` command starts (`snakegate.check.shellscripts`)
are held to the same; one the run's pinned copy of the workflow does not hold (outside the workflow folder,
under its test/, or started from the working folder) is `script_unpinned`, an error for every tier: what runs
would not be what was checked.

Each is a named finding, an error for the `curated` tier and a warning for `community`; never silence.
Pure: the reader's facts (rules, scripts, literals) in, findings out.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator

from snakegate.check.facts import Finding, WorkflowFacts, inside
from snakegate.check.shellscripts import shell_code

URL = re.compile(r"\b(?:https?|ftp|sftp|s3|gs)://[^\s'\"{}]+", re.I)
DOWNLOAD = re.compile(r"(?<![\w.-])(wget|curl|aria2c|lftp|rsync|scp|sftp|git\s+clone|svn\s+(?:co|checkout|export)|"
                      r"(?:pip|conda|mamba|micromamba)\s+install|fasterq-dump|fastq-dump|prefetch|efetch|"
                      r"gsutil\s+cp|aws\s+s3\s+cp)(?![\w-])")
# An absolute path: after a separator, at least two segments; system places a command may name are fine.
ABSOLUTE = re.compile(r"(?:(?<=[\s=<>'\"(:,])|^)(/[A-Za-z0-9_.+-]+/[A-Za-z0-9_.+/-]*[A-Za-z0-9_+-])")
SYSTEM = ("/dev/", "/proc/self/", "/bin/", "/usr/bin/", "/usr/local/bin/", "/usr/share/", "/etc/", "/sys/")
# A relative file path in a shell command: a/b.ext, not through {input}/{output}.
RELATIVE = re.compile(r"(?:(?<=[\s=<>'\"(])|^)((?:\.\.?/)?[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*\.[A-Za-z0-9]+)(?=[\s;|&)'\"]|$)")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
UNPINNED = "script_unpinned"


def _severity(f: WorkflowFacts) -> str:
    return "error" if f.trust == "curated" else "warning"


def _finding(f: WorkflowFacts, code: str, message: str, hint: str, rule=None, file=None, line=None) -> Finding:
    tier = "curated" if f.trust == "curated" else "community"
    return Finding(_severity(f), f.id, code, f"{message} ({'an error' if tier == 'curated' else 'a warning'} for the "
                                             f"{tier} tier)", hint=hint, rule=rule, file=file, line=line)


def absolute_paths(text: str) -> list[str]:
    found = []
    # `{workflow.basedir}/x.py`, `{input}/part` are built on a value, not absolute: the placeholder is no separator
    for m in ABSOLUTE.finditer(PLACEHOLDER.sub("\x00", text)):
        path = m.group(1)
        if not path.startswith(SYSTEM) and not URL.search(text[max(0, m.start() - 8):m.end()]):
            found.append(path)
    return found


def relative_paths(text: str) -> list[str]:
    stripped = PLACEHOLDER.sub("\x00", URL.sub(" ", text))
    return [m.group(1) for m in RELATIVE.finditer(stripped) if "\x00" not in m.group(1)]


def rule_findings(f: WorkflowFacts) -> list[Finding]:
    """wrapper:, conda: without its env file, downloads, URLs and hard-coded paths in each rule."""
    if f.source is None:
        return []
    out = []
    for rule in f.source.rules:
        where = dict(rule=rule.name, file=rule.file, line=rule.line)
        if rule.wrapper:
            out.append(_finding(f, "wrapper_unchecked",
                                f"rule `{rule.name}` runs wrapper `{rule.wrapper}`: its code is fetched when the job "
                                "runs and is not part of the workflow folder, so snakegate cannot prove what it reads, "
                                "writes or whether it runs offline", "replace it with a shell: or script: the workflow "
                                "ships, or keep it and rely on `snakegate test` to run it", **where))
        if rule.conda and not _env_shipped(f, rule):
            out.append(_finding(f, "conda_env_missing",
                                f"rule `{rule.name}` names conda environment `{rule.conda}`, which is not a file in "
                                "the workflow folder, so what the rule runs with cannot be read",
                                "ship the environment file (envs/<name>.yaml) next to the rules, or drop conda:", **where))
        # a script the command starts from the working folder is named by script_findings, not twice here
        started = [s.started for s in f.source.scripts if s.rule == rule.name and s.from_workdir]
        for text in rule.shell:
            text = shell_code(text)  # a URL in a comment is a citation, not a download
            out.extend(_text_findings(f, text, f"the shell command of rule `{rule.name}`", where, shell=True,
                                      declared=[t for k, t, _ in rule.literals if k in ("output", "log")] + started))
        for kind, text, line in rule.literals:
            if kind == "params" and URL.search(text):
                out.append(_finding(f, "download", f"rule `{rule.name}` passes the URL {URL.search(text).group(0)} "
                                                   "in params:, so data comes from the network, unseen by the gate",
                                    "make the file an x-artifact input inside a data root", rule=rule.name,
                                    file=rule.file, line=line))
    return out


def _env_shipped(f: WorkflowFacts, rule) -> bool:
    if not rule.conda or not rule.conda.endswith((".yaml", ".yml")):
        return False
    base = os.path.dirname(os.path.join(f.root, rule.file) if f.root else rule.file)
    path = os.path.normpath(os.path.join(base, rule.conda))
    rel = os.path.relpath(path, f.root).replace(os.sep, "/") if f.root else path
    return inside(path, f.folder) and (rel in f.existing_files or os.path.isfile(path))


def _text_findings(f, text: str, what: str, where: dict, shell: bool, declared=()) -> Iterator[Finding]:
    m = DOWNLOAD.search(text)
    if m:
        yield _finding(f, "download", f"{what} downloads (`{m.group(1)}`): its data comes from the network, unseen by "
                                      "the gate and unpinned by the invocation", "give the file as an x-artifact "
                                      "input inside a data root instead of fetching it", **where)
    elif URL.search(text):
        yield _finding(f, "download", f"{what} names the URL {URL.search(text).group(0)}",
                       "give the file as an x-artifact input inside a data root", **where)
    for path in dict.fromkeys(absolute_paths(text)):
        yield _finding(f, "hardcoded_path", f"{what} uses the absolute path {path}, which no param names and no "
                                            "other machine has", "pass it through input: from an x-artifact param",
                       **where)
    if shell:
        for path in dict.fromkeys(relative_paths(text)):
            if any(path == d or PLACEHOLDER.sub("", d) == path for d in declared):
                continue
            yield _finding(f, "hardcoded_path", f"{what} names the file {path} directly instead of through "
                                                "{input}/{output}, so Snakemake does not track it",
                           "declare it as an input or output of the rule and use {input.<name>}/{output.<name>}",
                           **where)


def script_findings(f: WorkflowFacts) -> list[Finding]:
    """Scripts that open literal paths, name absolute paths or URLs, or read config behind params:'s back."""
    if f.source is None:
        return []
    out = []
    for script in f.source.scripts:
        if script.missing:
            out.append(Finding("error", f.id, "hardcoded_path", f"rule `{script.rule}` runs {script.file}, which "
                               "does not exist", hint="ship the script in the workflow folder", rule=script.rule,
                               file=script.file))
            continue
        out.extend(_unpinned(f, script))
        if script.shell is not None:
            out.extend(_text_findings(f, shell_code(script.shell), script.file, dict(rule=script.rule,
                                      file=script.file), shell=True))
        for call, line in script.fetches:
            out.append(_finding(f, "download", f"{script.file} downloads with `{call}`: its data comes from the "
                                               "network, unseen by the gate and unpinned by the invocation",
                                "give the file as an x-artifact input inside a data root and read "
                                "snakemake.input.<name>", rule=script.rule, file=script.file, line=line))
        hidden = [(f"takes paths from the working folder (`{call}`), which is the registry root on the registry "
                   "path", line) for call, line in script.cwd]
        hidden += [(f"opens `{built}`, a path built relative to the working folder", line)
                   for built, line in script.built_paths]
        for what, line in hidden:
            out.append(_finding(f, "hardcoded_path", f"{script.file} {what}: a hidden input or output Snakemake does "
                                                     "not track", "pass the file or folder in through the rule's "
                                                     "input:/output: and use snakemake.input.<name> / "
                                                     "snakemake.output.<name>", rule=script.rule, file=script.file,
                                line=line))
        opened = {line: text for text, line in script.opened}
        for text, line in script.opened:
            if not URL.match(text):
                out.append(_finding(f, "hardcoded_path", f"{script.file} opens the literal path `{text}`: a hidden "
                                                         "input or output Snakemake does not track",
                                    "pass the file in through the rule's input:/output: and use "
                                    "snakemake.input.<name> / snakemake.output.<name>", rule=script.rule,
                                    file=script.file, line=line))
        if script.unseeded:
            call, line = script.unseeded[0]
            out.append(_finding(f, "unseeded_random",
                                f"{script.file} draws random numbers ({call}) but seeds no generator, so the same "
                                "invocation gives other outputs on every run", "seed it once from a param: "
                                "np.random.seed(snakemake.params.seed) / random.seed(...), or "
                                "rng = np.random.default_rng(snakemake.params.seed)", rule=script.rule,
                                file=script.file, line=line))
        fetched = {line for _, line in script.fetches}
        for text, line in script.strings:
            if line in opened and opened[line] == text or line in fetched:
                continue
            hits = [h for h in _string_hits(text)]
            for code, message, hint in hits:
                out.append(_finding(f, code, f"{script.file}: {message}", hint, rule=script.rule, file=script.file,
                                    line=line))
    return out


def _unpinned(f: WorkflowFacts, script) -> list[Finding]:
    """A script that runs but is not the workflow folder's pinned copy: what runs is not what was checked."""
    where = dict(rule=script.rule, file=script.file)
    how = f"the shell command of rule `{script.rule}` starts `{script.started}`" if script.started else \
        f"rule `{script.rule}` runs {script.file}"
    if not script.pinned:
        return [Finding("error", f.id, UNPINNED, f"{how}, which lies outside the workflow folder (or under its "
                        "test/): the invocation's hash does not cover it and the run's copy of the workflow does "
                        "not hold it, so what runs is not what was checked and approved",
                        hint="move the script into the workflow folder (e.g. scripts/) and name it from there",
                        **where)]
    if script.from_workdir:
        return [Finding("error", f.id, UNPINNED, f"{how} from the working folder (the registry root on the "
                        f"registry path), not the {script.file} the workflow ships: that file is not the checked "
                        "and pinned one, or is not there at all",
                        hint="name it from the Snakefile's folder: `{workflow.basedir}/<path>` in the command, or "
                             "`input: script=workflow.source_path(\"<path>\")` and `{input.script}`", **where)]
    return []


def _string_hits(text: str) -> Iterator[tuple[str, str, str]]:
    url = URL.search(text)
    if url:
        yield "download", f"names the URL {url.group(0)}", "give the file as an x-artifact input inside a data root"
    elif text.startswith("/") and absolute_paths(text):
        yield ("hardcoded_path", f"names the absolute path {text}",
               "pass it through the rule's input:/params: from an x-artifact param")


def param_findings(f: WorkflowFacts) -> list[Finding]:
    """URLs as schema defaults or example values: data that would come from the network."""
    out = []
    for where, value in _strings(f.schema or {}, "schema.json"):
        if where.endswith(".default") and URL.search(value):
            out.append(_finding(f, "download", f"{where} is the URL {value}: a download the gate cannot pin",
                                "make the file an x-artifact input inside a data root", file=f"{f.rel}/schema.json"))
    for ex in f.examples:
        for where, value in _strings(ex.resolved_params or {}, "params"):
            if URL.search(value):
                out.append(_finding(f, "download", f"{where} = {value} in {os.path.basename(ex.name)} is a URL: "
                                                   "a download the gate cannot pin",
                                    "make the file an x-artifact input inside a data root", file=ex.name))
    return out


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value
