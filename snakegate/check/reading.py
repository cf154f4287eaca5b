"""Read a Snakemake workflow folder into plain data (`WorkflowSource`): the one parser of the check and of draft.

Either layout: `Snakefile` at the top, or the standard `workflow/Snakefile`
with `workflow/rules/*.smk`, `workflow/scripts/`, `workflow/schemas/` and
`config/` (a top-level `Snakefile` that only `include:`s the real one is
followed like any include). Every Snakefile, `include:`d file and `module`
Snakefile with a literal path (and every file an `include:` built from config,
`f"rules/{config['mode']}.smk"`, can name: the glob `rules/*.smk`) is translated to Python by Snakemake's own
parser and scanned (`snakegate.check.pyscan`); config reads inside a module
are mapped to the outer config through the module's `config:`. Every Python
script a rule runs (`script:`) is scanned for `snakemake.config[...]` and the
literal paths it opens; an R script (`snakegate.check.rscan`) for `snakemake@config[[...]]` /
`snakemake@config$...` and the literal paths it reads. A script a `shell:` command starts (`python
scripts/x.py`, `Rscript {workflow.basedir}/x.R`, `bash {input.script}`: `snakegate.check.shellscripts`) is
read the same way, found where the command would find it (one named from the working folder is looked
for in the workflow folder, which is where the project keeps it), and a shell script's text is kept for
the shell findings. Each script says whether the run's pinned copy of the workflow holds it. Line numbers are
the files' own. This module only reads files; it never executes the workflow
and never writes.
"""

from __future__ import annotations

import ast
import os
import types
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.check.ioexpr import Bindings
from snakegate.check.pyscan import ConfigRead, DynamicAccess, RuleSource, scan
from snakegate.check.randomness import unseeded_draws
from snakegate.check.rscan import scan_r
from snakegate.check.scriptscan import scan_script
from snakegate.check.shellscripts import StartedScript
from snakegate.provenance.hashing import IGNORED_NAMES, WORKFLOW_EXCLUDED

SNAKEFILE_PLACES = ("Snakefile", "workflow/Snakefile", "snakefile", "workflow/snakefile")


@dataclass
class ScriptSource:
    file: str  # display path
    rule: str
    language: str  # python | r | other
    opened: list[tuple[str, int | None]] = field(default_factory=list)
    strings: list[tuple[str, int | None]] = field(default_factory=list)
    unseeded: list[tuple[str, int]] = field(default_factory=list)  # random draws in a script that seeds nothing
    missing: bool = False
    # snakegate.check.scriptscan: library downloads, working-folder paths, the snakemake.params names it reads
    fetches: list[tuple[str, int]] = field(default_factory=list)
    cwd: list[tuple[str, int]] = field(default_factory=list)
    built_paths: list[tuple[str, int]] = field(default_factory=list)
    params_read: list[tuple[str, int]] = field(default_factory=list)
    started: str | None = None  # started by the rule's shell: command, as it writes it (None: script:/notebook:)
    from_workdir: bool = False  # that command finds it from the working folder, not from the workflow's folder
    pinned: bool = True  # inside the workflow folder and not under test/: hashed by the invocation, copied by the run
    shell: str | None = None  # a shell script's text (language "shell"), for the shell command findings
    imports: list[tuple[str, int | None]] = field(default_factory=list)  # a Python script's top-level imports


@dataclass
class WorkflowSource:
    """Everything the proofs and draft know about a workflow's code, as plain data."""

    folder: str  # display path of the workflow folder
    snakefile: str | None = None  # display path of the entry Snakefile
    layout: str = "flat"  # flat | standard
    files: list[str] = field(default_factory=list)  # Snakefiles read, in reading order
    reads: list[ConfigRead] = field(default_factory=list)
    dynamic: list[DynamicAccess] = field(default_factory=list)
    validations: list[tuple[str, int | None, str | None]] = field(default_factory=list)  # (file, line, schema)
    configfiles: list[tuple[str, int | None, str | None]] = field(default_factory=list)  # (file, line, path)
    modules: list[tuple[str, str, int | None, str | None, tuple | None]] = field(default_factory=list)
    source_paths: list[tuple[str, int | None, str]] = field(default_factory=list)  # (file, line, resolved display)
    rules: list[RuleSource] = field(default_factory=list)  # in parse order, includes where they stand
    target_rules: list[str] = field(default_factory=list)  # the rules that can be the default target, in order
    scripts: list[ScriptSource] = field(default_factory=list)
    unfollowed: list[tuple[str, int | None, str]] = field(default_factory=list)  # (file, line, why)
    other_validations: list[tuple[str, int | None, str | None]] = field(default_factory=list)  # validate(df, ...)
    tables: list[tuple] = field(default_factory=list)  # config key paths read as tables (pd.read_csv(config[k]))
    globs: list[tuple[str, int | None, str, str | None]] = field(default_factory=list)  # (file, line, pattern, rule)
    linemaps: dict[str, dict[int, int]] = field(default_factory=dict)
    names: Bindings = field(default_factory=Bindings)  # top-level names of every file read (later files win)
    # include: built from config, read as a glob: (file, line, pattern, the files it matched)
    pattern_includes: list[tuple[str, int | None, str, list[str]]] = field(default_factory=list)
    imports: list[tuple[str, str, int | None]] = field(default_factory=list)  # (top-level module, file, line)

    def source_line(self, file: str | None, line: int | None) -> int | None:
        if file is None or line is None or file not in self.linemaps:
            return line
        return self.linemaps[file].get(line, line)

    def default_target(self) -> RuleSource | None:
        """The rule Snakemake builds when asked for no target: the one marked `default_target: True`, else the
        first in parse order, among the rules that can be it (none from an `include:`d file); None if none can."""
        rules = [r for r in self.rules if r.name in self.target_rules]
        return next((r for r in rules if r.default_target), rules[0] if rules else None)

    def rule(self, name: str) -> RuleSource | None:
        return next((r for r in self.rules if r.name == name), None)


class SnakefileSyntaxError(Exception):
    def __init__(self, message: str, file: str, line: int | None):
        super().__init__(message)
        self.message, self.file, self.line = message, file, line


class _SourceCache:
    """The one thing `snakemake.parser.parse` needs from a Workflow: a way to open the file."""

    def open(self, source, mode="r"):
        return open(source.get_path_or_uri(secret_free=True), mode, encoding="utf-8")


def compile_snakefile(path: Path) -> tuple[str, dict[int, int]]:
    """(Python source, {compiled line: Snakefile line}) via Snakemake's own parser."""
    from snakemake.parser import parse
    from snakemake.sourcecache import LocalSourceFile

    linemap: dict[int, int] = {}
    try:
        code, _ = parse(LocalSourceFile(str(path)), types.SimpleNamespace(sourcecache=_SourceCache()), linemap)
    except SyntaxError as exc:
        raise SnakefileSyntaxError(exc.msg or str(exc), str(path), exc.lineno) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnakefileSyntaxError(f"cannot read it ({exc})", str(path), None) from None
    except Exception as exc:  # noqa: BLE001 - tokenizer errors and the like: the file does not parse
        raise SnakefileSyntaxError(f"{type(exc).__name__}: {exc}", str(path), getattr(exc, "lineno", None)) from None
    return code, linemap


def find_snakefile(folder: Path) -> Path | None:
    """The entry Snakefile of a workflow folder in either layout."""
    for place in SNAKEFILE_PLACES:
        if (folder / place).is_file():
            return folder / place
    return None


def display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def read_workflow(folder: Path, root: Path | None = None, snakefile: Path | None = None) -> WorkflowSource:
    """Read `folder`'s Snakefile, includes, modules and scripts. Raises SnakefileSyntaxError."""
    folder = folder.resolve()
    src = WorkflowSource(folder=display(folder, root))
    entry = snakefile or find_snakefile(folder)
    if entry is None:
        return src
    src.snakefile = display(entry, root)
    src.layout = "standard" if (folder / "workflow").is_dir() and entry.parent.name == "workflow" else "flat"
    seen: set[tuple[Path, tuple | None]] = set()
    # (path, config prefix of this file: () the outer config, ("x",) a module given config["x"], None a module
    # with a config of its own; in a module?; including file; its line)
    pending: list[tuple[Path, tuple | None, bool, str | None, int | None]] = [(entry.resolve(), (), False, None, None)]
    # where each file stands in Snakemake's parse order: an include: is read where it stands, so its rules come
    # between the rules before and after it (the first rule in that order is the default target)
    place: dict[tuple[Path, tuple | None], tuple] = {}
    order: dict[int, tuple] = {}  # id(rule) -> its place
    # Snakemake puts its default target back after each include: (a rule there is never the default target),
    # not after a module's `use rule`; so a file gives the default target when only modules lead to it
    targets: dict[tuple[Path, tuple | None], bool] = {(entry.resolve(), ()): True}
    giving: set[int] = set()
    while pending:
        path, prefix, in_module, parent, parent_line = pending.pop(0)
        here = place.get((path, prefix), ())
        gives_target = targets.get((path, prefix), False)
        if (path, prefix) in seen:
            continue
        seen.add((path, prefix))
        shown = display(path, root)
        if not path.is_file():
            src.unfollowed.append((parent or shown, parent_line, f"{shown} does not exist"))
            continue
        code, linemap = compile_snakefile(path)
        try:
            tree = ast.parse(code)
        except SyntaxError as exc:
            raise SnakefileSyntaxError(exc.msg, str(path), linemap.get(exc.lineno or 0, exc.lineno)) from None
        src.files.append(shown)
        src.linemaps[shown] = linemap
        found = scan(tree, linemap, shown)
        _merge(src, found, prefix, in_module)
        for mine, theirs in ((src.names.lists, found.names.lists), (src.names.globbed, found.names.globbed),
                             (src.names.functions, found.names.functions)):
            mine.update(theirs)
        for target, line, pattern in found.includes:
            matches = _pattern_matches(path.parent, pattern, folder) if pattern else []
            if pattern and matches:  # built from config: every file it can name is read, so their reads count
                src.pattern_includes.append((shown, line, pattern, [display(m.resolve(), root) for m in matches]))
                pending.extend((m.resolve(), prefix, in_module, shown, line) for m in matches)
                for i, m in enumerate(matches):
                    place.setdefault((m.resolve(), prefix), here + (line or 0, i))
                    targets.setdefault((m.resolve(), prefix), False)
            elif target is None:
                src.unfollowed.append((shown, line, f"an include path built from config matches no file ({pattern})"
                                       if pattern else "an include path that is not a literal string is not followed"))
            else:
                pending.append(((path.parent / target).resolve(), prefix, in_module, shown, line))
                place.setdefault(((path.parent / target).resolve(), prefix), here + (line or 0,))
                targets.setdefault(((path.parent / target).resolve(), prefix), False)
        for name, target, mapped, line in found.modules:
            if target is None:
                src.unfollowed.append((shown, line, f"module `{name}` has no literal snakefile path; not followed"))
                continue
            if "://" in target or target.startswith(("gh:", "github(")):
                src.unfollowed.append((shown, line, f"module `{name}` comes from {target}, outside the workflow folder"))
                continue
            inner = None if prefix is None or mapped is None else prefix + mapped
            module_path = (path.parent / target).resolve()
            src.modules.append((name, display(module_path, root), line, shown, inner))
            pending.append((module_path, inner, True, shown, line))
            place.setdefault((module_path, inner), here + (line or 0,))
            targets.setdefault((module_path, inner), gives_target)
        src.imports.extend((module, shown, line) for module, line in found.imports)
        for schema, line in found.validations:
            src.validations.append((shown, line, schema))
        for schema, line in found.other_validations:
            src.other_validations.append((shown, line, schema))
        src.tables.extend(key for key, _line in found.tables if prefix is not None)
        src.globs.extend((shown, line, pattern, rule) for pattern, line, rule in found.globs)
        for cfg, line in found.configfiles:
            src.configfiles.append((shown, line, cfg))
        for anchor, rel, line in found.anchored_configfiles:  # as a path from the workflow folder, where it is run
            named = (entry.resolve().parent if anchor == "basedir" else path.parent) / rel
            src.configfiles.append((shown, line, os.path.relpath(named, folder) if _pinned(named, folder) else None))
        for rel, line in found.source_paths:
            src.source_paths.append((shown, line, display((path.parent / rel).resolve(), root)))
        for rule in found.rules:
            src.rules.append(rule)
            order[id(rule)] = here + (rule.line or 0,)
            if gives_target:
                giving.add(id(rule))
            if rule.script or rule.notebook:
                src.scripts.append(read_script(path.parent / (rule.script or rule.notebook), rule.name, root, src))
                src.scripts[-1].pinned = _pinned(path.parent / (rule.script or rule.notebook), folder)
            for started in rule.started:
                place = _started_file(started, rule, path, entry, folder)
                if place is not None:
                    script = read_script(place[0], rule.name, root, src, started.language)
                    script.started, script.from_workdir = started.written, place[1]
                    script.pinned = _pinned(place[0], folder)
                    src.scripts.append(script)
    src.rules.sort(key=lambda r: order[id(r)])
    src.target_rules = [r.name for r in src.rules if id(r) in giving]
    return src



def _started_file(started: StartedScript, rule: RuleSource, here: Path, entry: Path,
                  folder: Path) -> tuple[Path, bool] | None:
    """(the file a shell: command starts, whether it is found from the working folder); None when the
    reader cannot follow it: an input it cannot read, or a file from the working folder the workflow does
    not ship (the relative-path finding names that one)."""
    anchor, rel = started.anchor, started.path
    if anchor == "input":
        if rule.shipped.get(rel) is None:
            return None
        anchor, rel = rule.shipped[rel]
    base = {"source": here.parent, "basedir": entry.resolve().parent, "workdir": folder}[anchor]
    places = [base / f"{rel}.py", base / rel / "__main__.py"] if started.module else [base / rel]
    found = next((p for p in places if p.is_file()), None)
    if found is None and anchor == "workdir":
        return None
    # an input read from the working folder is named by the check of the rule's inputs (hidden_input)
    return found or places[0], anchor == "workdir" and started.anchor != "input"


def _pinned(path: Path, folder: Path) -> bool:
    """Whether the run's copy of the workflow folder holds `path` (hashing.workflow_files, read lexically:
    a symlink inside the folder is copied by its bytes)."""
    try:
        parts = Path(os.path.normpath(path)).relative_to(folder).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] not in WORKFLOW_EXCLUDED and not IGNORED_NAMES.intersection(parts)


MAX_PATTERN_INCLUDES = 50


def _pattern_matches(base: Path, pattern: str, folder: Path) -> list[Path]:
    """Files of the workflow folder a config-built include can name (a hostile pattern reads nothing outside)."""
    if pattern.startswith(("/", "~")):
        return []
    try:
        found = sorted(p.resolve() for p in base.glob(pattern) if p.is_file())
    except (OSError, ValueError, NotImplementedError):
        return []
    return [p for p in found if p.is_relative_to(folder)][:MAX_PATTERN_INCLUDES]


def _merge(src: WorkflowSource, found, prefix: tuple | None, in_module: bool) -> None:
    """Add one file's reads, mapped to the outer config when the file is a module Snakefile."""
    if prefix is None:  # a module with a config of its own: its reads are not this workflow's params
        return
    for r in found.reads:
        src.reads.append(ConfigRead(prefix + r.path, r.file, r.line, r.rule, "module" if in_module else r.how))
    for d in found.dynamic:
        src.dynamic.append(DynamicAccess(prefix + d.prefix, d.file, d.line, d.rule, d.text, d.whole and not prefix))


def read_script(path: Path, rule: str, root: Path | None, src: WorkflowSource,
                language: str | None = None) -> ScriptSource:
    """Scan one rule script: config reads go straight into `src.reads` (how="script"). `language`: the
    interpreter a shell: command starts it with; else its suffix says."""
    shown = display(path.resolve(), root)
    suffix = path.suffix.lower()
    language = language or {".py": "python", ".r": "r", ".rmd": "r"}.get(suffix, "other")
    out = ScriptSource(file=shown, rule=rule, language=language)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        out.missing = True
        return out
    if language == "python":
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            src.unfollowed.append((shown, exc.lineno, f"script {shown} does not parse as Python ({exc.msg})"))
            return out
        found = scan(tree, {}, shown, script=True)
        src.reads.extend(ConfigRead(r.path, r.file, r.line, rule, "script") for r in found.reads)
        src.dynamic.extend(DynamicAccess(d.prefix, d.file, d.line, rule, d.text, d.whole) for d in found.dynamic)
        facts = scan_script(tree)
        # a docstring cites a URL, it does not fetch it; a fetch is reported as one, not as an opened path
        fetched = {line for _, line in facts.fetches}
        out.opened = [(t, line) for t, line in found.opened if line not in fetched]
        out.strings = [(t, line) for t, line in found.strings if (t, line) not in facts.docstrings]
        out.fetches, out.cwd, out.built_paths = facts.fetches, facts.cwd, facts.built_paths
        out.params_read = facts.params_read
        out.imports = found.imports
        out.unseeded = unseeded_draws(tree)
    elif language == "r":
        found = scan_r(text)
        src.reads.extend(ConfigRead(path, shown, line, rule, "script") for path, line in found.reads)
        src.dynamic.extend(DynamicAccess(prefix, shown, line, rule, text, whole)
                           for prefix, line, text, whole in found.dynamic)
        out.opened, out.strings, out.params_read = found.opened, found.strings, found.params_read
    elif language == "shell":
        out.shell = text
    return out
