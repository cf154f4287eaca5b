"""The edge of `snakegate check`: read each workflow folder (through `snakegate.check.reading`), gate its
examples, build their DAGs, lint and format-check it, and hand plain `WorkflowFacts` to the pure proofs.

A crash while gathering is recorded in the facts, never raised. Nothing is written next to the workflow.
Every step that executes the workflow's own Python (its preflight while an example is gated, Snakemake
building the DAG or linting) runs in the sandbox (`snakegate.gate.sandbox`), and so does snakefmt; reading
the workflow (`snakegate.check.reading`) only parses it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from snakegate.check import packages
from snakegate.check.facts import ExampleFacts, WorkflowFacts
from snakegate.check.hygiene import IGNORED_LINTS
from snakegate.check.reading import SnakefileSyntaxError, find_snakefile, read_workflow
from snakegate.contract.dialect import did_you_mean
from snakegate.gate.dag import DagError
from snakegate.errors import ExitCode, UserError
from snakegate.models import GateError
# ----------------------------------------------------------------------------------------------
# the edge: read files, gate examples, build DAGs, lint, format


def rel_path(path: Path | str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def gather(folder: Path, registry, settings, *, hygiene: bool = True) -> WorkflowFacts:
    """Read and load everything about one workflow folder; never raises for a broken workflow."""
    root = settings.registry_root
    facts = WorkflowFacts(id=folder.name, folder=str(folder.resolve()), rel=rel_path(folder, root), root=str(root.resolve()))
    steps = [
        (_gather_manifest, "manifest_invalid"), (_gather_schema, "schema_invalid"),
        (_gather_source, "undeclared_config_key"), (_gather_examples, "example_invalid"),
        (_gather_preflight, "preflight_invalid"), (_gather_packages, packages.CODE),
    ]
    if hygiene:
        steps += [(_gather_lint, "lint"), (_gather_tools, "tool_missing")]  # format: batched, see gather_format
    for step, code in steps:
        try:
            step(facts, folder, registry, settings)
        except Exception as exc:  # noqa: BLE001 - fail closed: record the crash as an error finding
            facts.crashes.append((code, f"snakegate could not {_STEP_WORDS.get(step.__name__, step.__name__)} "
                                        f"for this workflow: {type(exc).__name__}: {exc}"))
    return facts


_STEP_WORDS = {
    "_gather_manifest": "read workflow.yaml", "_gather_schema": "read schema.json",
    "_gather_source": "read the Snakefile, its includes, modules and scripts",
    "_gather_examples": "gate the examples and build their DAGs", "_gather_lint": "lint the Snakefile",
    "_gather_tools": "look up the declared tools", "_gather_packages": "look up the Python packages it imports", "_gather_preflight": "read preflight.py",
}


def _gather_preflight(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    """The text of preflight.py, for the pure proof in snakegate.check.preflights (never imported here)."""
    path = folder / "preflight.py"
    if path.is_file():
        facts.preflight_file = rel_path(path, settings.registry_root)
        facts.preflight_source = path.read_text(encoding="utf-8")


def _gather_manifest(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    from ruamel.yaml import YAML, YAMLError

    from snakegate.registry.workflows import manifest_problems

    path = folder / "workflow.yaml"
    if not path.is_file():
        facts.manifest_problems = ["workflow.yaml is missing: every workflow folder needs a manifest"]
        return
    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (YAMLError, UnicodeDecodeError) as exc:
        facts.manifest_problems = [f"not valid YAML: {str(exc).splitlines()[0]}"]
        return
    facts.manifest = data if isinstance(data, dict) else None
    facts.manifest_problems = manifest_problems(data, folder.name)


def _gather_schema(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    path = folder / "schema.json"
    if not path.is_file():
        facts.schema_problem = "schema.json is missing"
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        facts.schema_problem = f"schema.json is not valid JSON ({exc})"
        return
    if not isinstance(data, dict):
        facts.schema_problem = "schema.json must be a JSON object (a JSON Schema)"
        return
    facts.schema = data


def _gather_source(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    facts.existing_files = {rel_path(p, settings.registry_root) for p in folder.rglob("*") if p.is_file()}
    if find_snakefile(folder) is None:
        facts.has_snakefile = False
        return
    try:
        facts.source = read_workflow(folder, settings.registry_root)
    except SnakefileSyntaxError as exc:
        facts.syntax_error = (exc.message, rel_path(exc.file, settings.registry_root), exc.line)
        return
    for _file, _line, path in facts.source.configfiles:
        # a standalone run started in the workflow folder loads it (relative to the working directory)
        data = _yaml_file(folder / path) if path and "\x00" not in path else None
        if isinstance(data, dict):
            facts.configfile_keys[path] = sorted(str(k) for k in data)


def _yaml_file(path: Path):
    from ruamel.yaml import YAML, YAMLError

    try:
        return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, YAMLError, UnicodeDecodeError):
        return None


def _schema_usable(schema: dict | None) -> bool:
    from jsonschema import Draft202012Validator

    if schema is None:
        return False
    try:
        Draft202012Validator.check_schema(schema)
    except Exception:  # noqa: BLE001 - reported by contract_findings; here it only means "cannot gate"
        return False
    return True


def _gather_examples(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    from snakegate.gate.dag import build_dag
    from snakegate.gate.prove import gate
    from snakegate.config.read import read_run_config
    from snakegate.gate.sheet_paths import with_absolute_paths

    wf = registry.get(folder.name)
    if facts.manifest_problems:
        return  # manifest_invalid is already the finding
    if wf is None:  # fail closed: a manifest the registry would not load means nothing below is proven
        facts.examples_skipped = ("the examples cannot be gated because the registry cannot load this workflow: "
                                  + registry.broken.get(folder.name, "unknown reason").splitlines()[0])
        return
    if not _schema_usable(facts.schema):
        facts.examples_skipped = "the examples cannot be gated because schema.json is not a usable JSON Schema"
        return
    root = settings.registry_root
    for path in wf.examples():
        ex = ExampleFacts(name=rel_path(path, root))
        facts.examples.append(ex)
        data, yaml_error = read_run_config(path)
        if yaml_error is not None:
            ex.gate_errors = [yaml_error]
            continue
        if isinstance(data, dict) and data.get("workflow") != wf.id:
            ex.gate_errors = [GateError(path="workflow", code="unknown_workflow",
                                        message=f"the example names workflow `{data.get('workflow')}`, not `{wf.id}`",
                                        hint=f"set `workflow: {wf.id}`")]
            continue
        # Missing external tools are this machine's problem, not the example's: a warning (_gather_tools).
        result = gate(registry, data, settings, check_dag=False, check_tools=False)
        if not result.ok:
            ex.gate_errors = list(result.errors)
            continue
        # Snakemake builds the DAG in a temporary folder: a sample sheet's relative paths reach it resolved
        # against the registry root, as the gate resolved them (its absolute copy stands for the sheet below)
        ex.resolved_params = with_absolute_paths(wf.schema, result.resolved_params, settings.registry_root)
        ex.sheet_inputs = _sheet_inputs(wf.schema, result.resolved_params, settings)
        if facts.syntax_error is not None or not facts.has_snakefile:
            continue  # reported once by config_key_findings
        try:
            ex.dag = build_dag(wf.snakefile, ex.resolved_params)
        except DagError as exc:
            file = rel_path(exc.file, root) if exc.file else None
            line = facts.source.source_line(file, exc.line) if facts.source else exc.line
            ex.dag_error = (exc.message, file, line)


def _sheet_inputs(schema: dict, params: dict, settings) -> dict[str, tuple[str, str]]:
    """Files named by the example's sample sheets (already proven by the gate): path -> (key, artifact type)."""
    from snakegate.contract import sheets
    from snakegate.contract.dialect import format_path, iter_nodes

    out = {}
    for node in iter_nodes(schema, params):
        sheet = sheets.row_schema(node.schema)
        if sheet is None or not isinstance(node.value, str):
            continue
        name = format_path(node.parts)
        result = sheets.sheet_problems(name, Path(node.value), node.schema["x-artifact"], sheet,
                                            settings.registry_root, [r.resolve() for r in settings.data_roots])
        columns = sheets.path_columns(sheet)
        for key, path in result.inputs.items():
            out[os.path.normpath(str(path))] = (key.removeprefix("params."), columns[key.rsplit(".", 1)[1]])
    return out


def _gather_lint(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    """Snakemake's own linter, in the sandbox (it loads the Snakefile), with the first example that builds."""
    example = next((ex for ex in facts.examples if ex.dag is not None), None)
    if example is None:
        return
    from snakegate.gate.dag import lint

    report = lint(find_snakefile(folder), example.resolved_params)
    root = settings.registry_root
    for block in report.get("snakefiles", []) + report.get("rules", []):
        where = block.get("for") or {}
        for lint_item in block.get("lints", []):
            if lint_item.get("title") in IGNORED_LINTS:
                continue
            line = where.get("line")
            if line is None:  # a Snakefile-level lint says its line only in its title ("... in line 12")
                found = _LINT_LINE.search(lint_item.get("title", ""))
                line = int(found.group(1)) if found else None
            facts.lints.append({"rule": where.get("rule"), "file": rel_path(where["snakefile"], root)
                                if where.get("snakefile") else None, "line": line,
                                "title": lint_item.get("title", ""), "body": lint_item.get("body", "")})


_LINT_LINE = re.compile(r"\bin line (\d+)")


def gather_format(all_facts: list[WorkflowFacts], root: Path) -> None:
    """snakefmt --check over every parsed Snakefile and .smk at once (one process: importing black is slow)."""
    owner = {}
    for facts in all_facts:
        for f in facts.source.files if facts.source else []:
            owner[f] = facts
    if not owner:
        return
    from snakegate.gate import sandbox

    try:
        # snakefmt only parses, but it reads contributed files: it runs in the sandbox like everything else
        proc = sandbox.run_command([sys.executable, "-m", "snakefmt", "--check", "--compact-diff",
                                    *[str(root / f) if not Path(f).is_absolute() else f for f in owner]],
                                   sandbox.SNAKEMAKE_LIMITS)
        if proc.returncode == 0:
            return
        diffs = parse_compact_diff(proc.stdout, root)
        for diff in diffs:
            if diff["file"] in owner:
                owner[diff["file"]].format_diffs.append(diff)
        if not diffs:  # snakefmt failed without a diff: say so once per workflow rather than pass silently
            for facts in {id(f): f for f in owner.values()}.values():
                facts.format_diffs.append({"file": facts.source.files[0], "line": None, "changed": 0,
                                           "excerpt": " ".join(proc.stderr.split()[-20:])})
    except Exception as exc:  # noqa: BLE001 - fail closed, as in gather()
        for facts in {id(f): f for f in owner.values()}.values():
            facts.crashes.append(("format", f"snakegate could not run snakefmt: {type(exc).__name__}: {exc}"))


def parse_compact_diff(text: str, root: Path) -> list[dict]:
    """snakefmt --compact-diff output -> one {file, line, changed, excerpt} per file (pure)."""
    out: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("=====> Diff for ") and line.endswith(" <====="):
            name = line[len("=====> Diff for "):-len(" <=====")]
            current = {"file": rel_path(name, root), "line": None, "changed": 0, "excerpt": None}
            out[current["file"]] = current
        elif current is None:
            continue
        elif line.startswith("@@") and current["line"] is None:
            try:
                current["line"] = int(line.split()[1].lstrip("-").split(",")[0])
            except (IndexError, ValueError):
                pass
        elif line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            current["changed"] += 1
            if current["excerpt"] is None:
                current["excerpt"] = line.strip()[:80]
    return list(out.values())


def _gather_packages(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    facts.missing_packages, facts.unimportable = packages.look_up(facts.manifest, facts.source, folder)


def _gather_tools(facts: WorkflowFacts, folder: Path, registry, settings) -> None:
    tools = (facts.manifest or {}).get("tools") or []
    facts.missing_tools = [{"name": t["name"], "install": t.get("install")} for t in tools
                           if isinstance(t, dict) and isinstance(t.get("name"), str) and shutil.which(t["name"]) is None]


# ----------------------------------------------------------------------------------------------
# selection and the whole run


def workflow_folders(root: Path) -> list[Path]:
    """Every contribution folder under workflows/ (with or without a manifest)."""
    base = root / "workflows"
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def select(root: Path, ids: list[str]) -> list[Path]:
    folders = {p.name: p for p in workflow_folders(root)}
    if not ids:
        return list(folders.values())
    out = []
    for wf_id in ids:
        if wf_id not in folders:
            close = did_you_mean(wf_id, list(folders))
            raise UserError(f"no workflow folder `{wf_id}` under {root / 'workflows'}"
                            + (f"; did you mean `{close}`?" if close else f"; available: {', '.join(folders)}"),
                            ExitCode.INVALID)
        out.append(folders[wf_id])
    return out
