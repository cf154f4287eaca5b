"""`snakegate draft PATH [--id ID]`: turn an existing Snakemake workflow folder into a registry contribution.

No model, no network, deterministic: the same folder gives the same files. The workflow is read with the
check's own reader (`snakegate.check.reading`, never a second parser), in either layout, with its
`include:`d rules, its `config/config.yaml` (or the `configfile:` it names), its Snakemake config schema
in YAML and its sample sheets. Written to `workflows/<id>/`:

- the workflow's files, copied unchanged (Snakefile, rules, scripts, envs, schemas, config; not data,
  results, logs, `.test/` or VCS folders);
- `workflow.yaml`: rules and their IO (unnamed IO named by position, `_1`, `_2`) typed from file extensions
  (the built-in types and the registry's own `[types.<name>]` in snakegate.toml, as its `check` reads them)
  and `rules.<r>.output.<n>` references, outputs from the default target, tools from the shell commands;
- `schema.json` (snakegate.contribute.draft_contract), `examples/config.yaml` from their config, a `SKILL.md` skeleton.

It returns the list of what the contributor still has to decide. An existing `workflows/<id>/` is never
touched (refused before anything is written).
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML, YAMLError

from snakegate.check.reading import WorkflowSource, find_snakefile, read_workflow
from snakegate.contribute.config_notes import ConfigNotes, read_notes
from snakegate.contribute.draft_contract import TODO, contract, node_at, type_of_path
from snakegate.contribute.draft_io import Evaluator, Paths
from snakegate.errors import ExitCode, UserError
from snakegate.config.write import dump_config
from snakegate.registry.types import use_types_of

SKIP_DIRS = frozenset({".git", ".github", ".snakemake", ".test", ".tests", "results", "logs", "benchmarks", "data",
                       "__pycache__", ".pytest_cache", "tests"})
# Commands every shell has; anything else a shell command starts is a tool the workflow needs.
COMMON = frozenset("""cat cd cp cut echo false gunzip gzip head ln ls mkdir mv printf rm sed sort tail tee test touch
tr true uniq wc zcat awk grep xargs set export exec python python3 bash sh env time sleep date basename dirname
find""".split())
UNKNOWN = "unknown"
LICENCE_NAMES = ("LICENSE", "LICENCE", "COPYING", "UNLICENSE")


@dataclass
class Draft:
    folder: Path
    decide: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)  # what draft could not know: the draft is incomplete (exit 1)
    written: list[str] = field(default_factory=list)


def slug(name: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", name.lower())).strip("-") or "workflow"


def draft(path: Path, registry_root: Path, wf_id: str | None = None) -> Draft:
    path = Path(path).resolve()
    if not path.is_dir() or find_snakefile(path) is None:
        raise UserError(f"{path} holds no Snakefile (nor workflow/Snakefile): point `snakegate draft` at the "
                        "folder of an existing Snakemake workflow", ExitCode.USAGE)
    wf_id = wf_id or slug(path.name)
    if slug(wf_id) != wf_id:
        raise UserError(f"`{wf_id}` is not a workflow id: use kebab-case, e.g. `{slug(wf_id)}`", ExitCode.USAGE)
    dest = registry_root / "workflows" / wf_id
    if dest.exists():
        raise UserError(f"{dest} already exists; nothing was written. Choose another id with --id, or remove it",
                        ExitCode.INVALID)
    use_types_of(registry_root)  # files are typed with the registry's own types, as its `check` types them
    src = read_workflow(path, path)  # raises SnakefileSyntaxError, caught by the command
    result = Draft(folder=dest)
    config, config_file = _their_config(path, src)
    their_schema = _their_schema(path, src)
    sheets = _sheets(path, src, config, result.decide)

    def exists(value: str) -> bool:
        return isinstance(value, str) and "\n" not in value and len(value) < 4096 and (path / value).is_file()

    notes = _notes(path, config_file)
    schema = contract(their_schema, config, exists, sheets, notes)
    manifest = _manifest(wf_id, path, src, result.decide, result.unsure, schema)
    _copy(path, dest, result)
    _write(dest / "workflow.yaml", dump_config(manifest), result)
    _write(dest / "schema.json", canonical_pretty(schema), result)
    _write(dest / "examples" / "config.yaml", _example(wf_id, config, path, registry_root, exists), result)
    _write(dest / "SKILL.md", _skill(wf_id, schema, manifest), result)
    said = [".".join(k) for k, text in notes.descriptions.items()
            if (node_at(schema, k) or {}).get("description") == text]
    if said:
        result.decide.append(f"schema.json: the descriptions of {', '.join(said)} are their config's comments; check "
                             "each describes its param (a comment above a key may head a section instead)")
    for key in notes.placeholders:
        result.decide.append(f"schema.json: their {config_file} leaves `{'.'.join(key)}` as a placeholder "
                             f"({_at(config, key)!r}), so it is no default: say what a user must give (required, "
                             "or a real default), and put a real value in examples/config.yaml")
    _decisions(result.decide, path, src, schema, config_file, their_schema, sheets, manifest)  # its last: check, test
    _outside(path, src, result.unsure)
    return result


def canonical_pretty(obj: Any) -> str:
    import json

    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def _yaml(path: Path) -> Any:
    try:
        return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError):
        return None


def _their_config(path: Path, src: WorkflowSource) -> tuple[dict, str | None]:
    candidates = [c for _, _, c in src.configfiles if c] + ["config/config.yaml", "config.yaml", "config/config.yml"]
    for rel in candidates:
        data = _yaml(path / rel)
        if isinstance(data, dict):
            return data, rel
    return {}, None


def _notes(path: Path, config_file: str | None) -> ConfigNotes:
    if config_file is None:
        return ConfigNotes()
    try:
        return read_notes((path / config_file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return ConfigNotes()


def _at(config: Any, key: tuple) -> Any:
    for part in key:
        config = config.get(part) if isinstance(config, dict) else None
    return config


def _their_schema(path: Path, src: WorkflowSource) -> dict | None:
    for file, _line, schema in src.validations:
        if schema and Path(schema).name != "schema.json":  # schema.json: snakegate's own contract, not theirs
            data = _yaml((path / file).parent / schema)
            if isinstance(data, dict):
                return data
    return None


def _sheets(path: Path, src: WorkflowSource, config: dict,
            decide: list[str]) -> dict[str, tuple[dict, list[dict]]]:
    """Config keys read as tables that a sample-sheet schema validates: key -> (row schema, rows). Each sheet
    gets its own schema (samples.schema.yaml for `samples`, units.schema.yaml for `units`), never the first
    one found; where draft cannot tell which, it says so and declares none."""
    schemas = [(f, s) for f, _, s in src.other_validations if s]
    keys = [k for k in dict.fromkeys(k[0] for k in src.tables if len(k) == 1)
            if isinstance(config.get(k), str) and (path / config[k]).is_file()]
    out = {}
    for key in keys if schemas else []:
        chosen = _sheet_schema(key, schemas, len(keys))
        if chosen is None:
            decide.append(f"schema.json: `{key}` is read as a table, and the workflow validates tables with "
                          f"{', '.join(s for _, s in schemas)}; draft cannot tell which is its: give `{key}` its "
                          "x-sample-sheet (that schema's rows) by hand")
            continue
        file, schema = chosen
        row_schema = _yaml((path / file).parent / schema)
        if not isinstance(row_schema, dict):
            continue
        lines = (path / config[key]).read_text(encoding="utf-8", errors="replace").splitlines()
        delimiter = "\t" if lines and "\t" in lines[0] else ","
        out[key] = (row_schema, list(csv.DictReader(lines, delimiter=delimiter)))
    return out


def _sheet_schema(key: str, schemas: list[tuple[str, str]], tables: int) -> tuple[str, str] | None:
    """The schema that validates the table read from config[key]: the one named for it, or the only one."""
    stem = key.lower().removesuffix("_sheet").removesuffix("s")
    named = [(f, s) for f, s in schemas if Path(s).name.split(".")[0].lower().removesuffix("s") == stem]
    if len(named) == 1:
        return named[0]
    return schemas[0] if len(schemas) == 1 and tables == 1 else None


def _manifest(wf_id: str, path: Path, src: WorkflowSource, decide: list[str], unsure: list[str],
              schema: dict) -> dict:
    ev = Evaluator(src)
    rules: dict[str, dict] = {}
    folders = {r.paths["output"].get(n) for r in src.rules for n in r.directories} - {None}  # directory("x")
    for rule in src.rules:
        if not rule.paths["output"]:
            continue
        io_types: dict[str, dict] = {}
        for kind in ("input", "output"):
            types = {}
            for name, literal in rule.paths[kind].items():
                found = ev.paths(rule.sources[kind][name]) if name in rule.sources[kind] else Paths()
                first = found.paths[0] if found.paths else literal
                types[name] = (type_of_path(first) if first else None) or _param_type(rule, kind, name, schema)
                if name in rule.directories and kind == "output" or first in folders:
                    types[name] = "directory"
                kinds = sorted({type_of_path(p) or UNKNOWN for p in found.paths})
                if len(kinds) > 1:  # expand(... ext=["html", "zip"]): one name, files of several types
                    types[name] = UNKNOWN
                    first = f"files of types {', '.join(kinds)}: split them into named {kind}s, one type each"
                if kind == "input" and _shipped(path, literal):  # copied with the workflow, but found from the cwd
                    beside = os.path.relpath(path / literal, (path / rule.file).parent)
                    decide.append(f"{rule.file}:{rule.line}: rule `{rule.name}` names its input {name}, "
                                  f"{literal}, a file of the workflow, relative to the working folder (the "
                                  "registry root on the registry path, where it is missing): name it "
                                  f"workflow.source_path({beside!r}) (check: hidden_input)")
                elif types[name] == UNKNOWN:
                    decide.append(f"workflow.yaml: give rules.{rule.name}.{kind}.{name} its artifact type "
                                  f"({first or 'a function or lookup decides the file'})")
            if kind == "input":
                _unpacked(rule, ev, types, decide, unsure)
            if kind == "input" and rule.inputs_unpacked:
                unsure.append(f"{rule.file}:{rule.line}: rule `{rule.name}` takes inputs from a **mapping whose names "
                              "draft cannot read (they may come from the config): list the names a run gives under "
                              f"rules.{rule.name}.input in workflow.yaml, each with its artifact type")
            if types:
                io_types[kind] = types
        rules[rule.name] = io_types
    title = _title(path) or wf_id.replace("-", " ").capitalize()
    return {"id": wf_id, "version": "0.1.0", "title": title,
            "description": f"{TODO} (drafted from {path.name} by snakegate draft)", "tags": [],
            "maintainers": [{"name": "TODO: your name"}], "trust": "community",
            "tools": [{"name": n, "version_command": [n, "--version"], "install": f"TODO: how to install {n}"}
                      for n in _tools(src)],
            "rules": rules, "outputs": _outputs(src, ev, decide, unsure)}


def _param_type(rule, kind: str, name: str, schema: dict) -> str:
    """The x-artifact type of the param a named input is read from (`input: gtf=config["annotation"]`)."""
    keys = [path for directive, keyword, path in rule.config_reads if directive == kind and keyword == name]
    node = node_at(schema, keys[0]) if len(keys) == 1 else None
    artifact = (node or {}).get("x-artifact")
    return artifact if isinstance(artifact, str) else UNKNOWN


def _unpacked(rule, ev: Evaluator, types: dict, decide: list[str], unsure: list[str]) -> None:
    """Inputs named by unpack(f): typed by the names f returns, never by a position they do not have."""
    for desc in rule.unpacked:
        names = ev.unpack_names(desc)
        if names is None:
            unsure.append(f"{rule.file}:{rule.line}: rule `{rule.name}` takes inputs from unpack({desc[1]}), whose "
                          f"names draft cannot read (it returns no dict literal): list them under "
                          f"rules.{rule.name}.input in workflow.yaml, each with its artifact type")
            continue
        for name, found in names.items():
            types[name] = (type_of_path(found.paths[0]) if found.paths else None) or UNKNOWN
            if types[name] == UNKNOWN:
                decide.append(f"workflow.yaml: give rules.{rule.name}.input.{name} its artifact type "
                              f"(unpack({desc[1]}) gives {found.paths[0] if found.paths else 'a computed file'})")


def _outputs(src: WorkflowSource, ev: Evaluator, decide: list[str], unsure: list[str]) -> dict:
    """What the default target asks for, evaluated: the first rule's inputs when it only collects (rule all),
    its own outputs when it makes them (rule hello)."""
    target = src.default_target()
    if target is None:
        unsure.append("workflow.yaml: the workflow has no rule, so no output; declare its outputs by hand" if not
                      src.rules else f"workflow.yaml: {src.snakefile} defines no rule of its own, and Snakemake never "
                      "takes the default target from an include:d file, so `snakemake` alone builds nothing: "
                      "declare the outputs by hand (or add a rule all that asks for them)")
        return {}
    kind = "output" if target.paths["output"] else "input"
    outputs: dict[str, dict] = {}
    for name, desc in list(target.sources[kind].items()) + [("_", ("unpack", d)) for d in target.unpacked]:
        found = ev.paths(desc)
        if found.unknown:
            unsure.append(f"workflow.yaml: the default target, rule `{target.name}`, asks for "
                          f"{'; '.join(found.unknown)}: draft cannot evaluate it, so outputs lists only the paths "
                          "it could read; declare the rest under outputs, each with its path and type")
        for literal in found.paths:
            out_name = name if not name.startswith("_") and len(found.paths) == 1 else \
                slug(Path(literal).name.split(".")[0]).replace("-", "_")
            if out_name in outputs:  # results/summary.csv and results/summary.png: keep both, named apart
                out_name = slug(Path(literal).name).replace("-", "_")
            outputs[out_name] = {"path": literal, "type": type_of_path(literal) or UNKNOWN,
                                 "description": f"{TODO} what {Path(literal).name} holds"}
            for wildcard, pattern in found.globbed.items():
                if "{" + wildcard + "}" in literal:
                    decide.append(f"workflow.yaml: outputs.{out_name}.path {literal}: {{{wildcard}}} takes its values "
                                  f"from the glob of `{pattern}` in the working folder, which no param names; make "
                                  f"`{wildcard}` a param (a list, or a mapping name -> file) and expand over it")
            if "{" in literal and not any("{" + w + "}" in literal for w in found.globbed):
                decide.append(f"workflow.yaml: outputs.{out_name}.path {literal} has wildcards; make each a {{param}} "
                              "placeholder (e.g. {samples}) that the params expand")
        for wildcard, source in found.listed.items():
            decide.append(f"workflow.yaml: outputs from rule `{target.name}` were enumerated over `{wildcard}` from "
                          f"{source} in the Snakefile; if a user should choose them, make it a param and the outputs "
                          f"one pattern with {{{wildcard}}}")
    return outputs


def _shipped(path: Path, literal: str | None) -> bool:
    """A literal path, relative to the workflow folder, of a file that draft copies with the workflow."""
    if not literal or "{" in literal or Path(literal).is_absolute() or Path(literal).parts[0] in SKIP_DIRS:
        return False
    return (path / literal).is_file()


def _title(path: Path) -> str | None:
    for name in ("README.md", "readme.md"):
        if (path / name).is_file():
            for line in (path / name).read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("# "):
                    return line[2:].strip()[:80] or None
    return None


def _tools(src: WorkflowSource) -> list[str]:
    found = []
    for rule in src.rules:
        for text in rule.shell:
            # a placeholder ({input}, or a global such as {CC}) is never a tool's name: "_" cannot start one
            for segment in re.split(r"\|\||&&|[|;()]|\$\(", re.sub(r"\{[^{}]*\}", "_", text)):
                words = segment.split()
                if words and re.fullmatch(r"[A-Za-z][\w.+-]*", words[0]) and words[0] not in COMMON:
                    found.append(words[0])
    return sorted(set(found))


def _copy(path: Path, dest: Path, result: Draft) -> None:
    def ignore(folder, names):
        top = Path(folder).resolve() == path
        return [n for n in names if n in SKIP_DIRS and top or n.startswith(".") or n == "__pycache__"]
    shutil.copytree(path, dest, ignore=ignore)
    result.written.extend(sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()))


def _write(target: Path, text: str, result: Draft) -> None:
    if target.exists():
        result.decide.append(f"{target.name}: the workflow already had one; snakegate's version was not written")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    result.written.append(target.name)


def _example(wf_id: str, config: dict, path: Path, root: Path, exists) -> str:
    def fix(value):
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, str) and exists(value):
            full = (path / value).resolve()
            try:
                return full.relative_to(root.resolve()).as_posix()
            except ValueError:
                return str(full)
        return value
    head = f"# Drafted from {path.name}'s config by snakegate draft: check the paths point into a data root.\n"
    return head + dump_config({"workflow": wf_id, "params": fix(config)})


def _skill(wf_id: str, schema: dict, manifest: dict) -> str:
    lines = [f"# {manifest['title']} ({wf_id})", "", f"{TODO}: when to use this workflow and what it gives.", "",
             "## Parameters", ""]
    for name, sub in (schema.get("properties") or {}).items():
        req = " (required)" if name in schema.get("required", []) else ""
        lines.append(f"- `{name}`{req}: {sub.get('description', TODO)}")
    lines += ["", "## When the gate refuses", "", f"{TODO}: what to ask the researcher for each likely gate error.", ""]
    return "\n".join(lines)


def _outside(path: Path, src: WorkflowSource, unsure: list[str]) -> None:
    """Files the workflow reads from outside its folder (a Nextstrain build's `../shared/`) are not copied: the
    draft cannot run until they are in the folder."""
    for file in sorted({f for f in src.files if Path(f).is_absolute()} | {s.file for s in src.scripts
                                                                           if Path(s.file).is_absolute()}):
        shown = os.path.relpath(file, path)
        unsure.append(f"{shown} is read from outside {path.name}/ (an include:, a module or a script), so it was not "
                      f"copied and the draft does not run: copy it into the workflow folder and point the line that "
                      f"names it there, or draft the folder that holds both")


def _decisions(decide: list[str], path: Path, src: WorkflowSource, schema: dict, config_file, their_schema, sheets,
               manifest):
    decide.insert(0, "workflow.yaml: title, description, tags, maintainers and trust (drafted as community)")
    if not any(p.is_file() and p.name.upper().startswith(LICENCE_NAMES) for p in Path(path).iterdir()):
        decide.insert(1, f"licence: {Path(path).name}/ holds no LICENSE (or COPYING) file, so nothing says the "
                         "registry may copy and share this code: find the licence its authors chose and add its "
                         "file to the workflow folder (or ask them for one) before contributing")
    todo = [name for name, sub in (schema.get("properties") or {}).items() if TODO in str(sub.get("description"))]
    if todo:
        decide.append(f"schema.json: describe {', '.join(todo)} (units, ranges, what the default means)")
    if config_file is None:
        decide.append("examples: the workflow has no config.yaml; write examples/<name>.yaml by hand")
    if their_schema is None:
        decide.append("schema.json: inferred from config values only; add ranges, enums and required params")
    for key in sheets:
        decide.append(f"examples: the sample sheet `{key}` names files relative to the workflow folder; in a "
                      "registry they resolve against the registry root, so copy the sheet and its files into a "
                      "data root and fix its paths")
    for file, line, pattern, _rule in src.globs:
        decide.append(f"{file}:{line}: the glob of `{pattern}` lists the workflow's inputs in the working folder (the "
                      "registry root on the registry path, so no param names them); make the list a param, e.g. a "
                      "mapping name -> file with x-artifact values, and read config[...] there "
                      "(check: working_folder_glob)")
    for rule in src.rules:
        for text in rule.shell:
            first = re.match(r"\s*\{(\w+)\}", text)
            if first and first.group(1) not in ("input", "output", "params", "wildcards", "threads", "resources", "log"):
                decide.append(f"workflow.yaml: rule `{rule.name}` starts its shell command with {{{first.group(1)}}}, "
                              "a value of the Snakefile: if it names a program, list that under tools")
    if manifest["tools"]:
        names = ", ".join(tool["name"] for tool in manifest["tools"])
        decide.append(f"workflow.yaml: tools {names} were read from shell commands; keep the real ones and give "
                      "each its version_command and install line")
    decide.append(f"examples and test: add test/<case>/config.yaml with tiny data and expected outputs, then run "
                  f"`snakegate check {manifest['id']}` and `snakegate test {manifest['id']}`; fix what they name "
                  "(downloads, wrappers, hard-coded paths, hidden inputs)")
