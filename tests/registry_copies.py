"""Throw-away registries for tests: the real top-level Snakefile, tabular-profile, the demo tables,
optional extra workflows, and optionally a git repository around them; and facts about tabular-profile.

Imported by the test modules (tests/ is on sys.path under pytest's default import mode).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from inprocess_cli import read_only, run_cli

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO
IGNORE = shutil.ignore_patterns("__pycache__", ".snakemake", "*.pyc")
TABULAR = ROOT / "workflows" / "tabular-profile"
TABULAR_SCHEMA = json.loads((TABULAR / "schema.json").read_text())
TABULAR_VERSION = re.search(r"^version:\s*(\S+)", (TABULAR / "workflow.yaml").read_text(), re.MULTILINE).group(1)


def git(root: Path, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def make_registry(root: Path, extra_workflows: dict[str, dict] | None = None, *, with_git: bool = False,
                  message: str = "test registry") -> Path:
    """Snakefile, schemas/, tabular-profile (+ extras: {id: {file name: text}}) and the demo tables."""
    (root / "workflows").mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    shutil.copytree(REPO / "snakegate" / "schemas", root / "schemas", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workflows" / "tabular-profile", root / "workflows" / "tabular-profile",
                    ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
    (root / "data" / "examples").mkdir(parents=True)
    for f in (REPO / "data" / "examples").glob("tabular-*.csv"):
        shutil.copy(f, root / "data" / "examples" / f.name)
    for wf_id, files in (extra_workflows or {}).items():
        (root / "workflows" / wf_id).mkdir()
        for name, text in files.items():
            path = root / "workflows" / wf_id / name  # a name may hold a folder: scripts/x.py
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
    if with_git:
        (root / ".gitignore").write_text("/runs/\n.snakemake/\n__pycache__/\n")
        git(root, "init", "-q")
        git(root, "config", "user.name", "Ada Tester")
        git(root, "config", "user.email", "ada@example.org")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
    return root


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    env.update(extra)
    return env


def snakegate(root: Path, *args, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    """The console command, run as a user would from the registry root; never a traceback.

    A command that only reads runs in this process (inprocess_cli.py says why and which); the others in a
    process of their own. Keyword arguments are environment variables (COLUMNS="80")."""
    if read_only(args):
        proc = run_cli(args, cwd=root, env=clean_env(**env), timeout=timeout)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        return proc
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *map(str, args)], cwd=root, env=clean_env(**env),
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def run_names(root: Path) -> set[str]:
    """The run folders under runs/, as `snakegate runs` lists them: a dot-folder is never a run (the front end's
    scratch folder, runs/.staging-<host>-<pid>-<random>/, holds the staged copies until the gate accepts them)."""
    runs = root / "runs"
    return {p.name for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")} if runs.is_dir() else set()


def new_run(root: Path, before: set[str]) -> Path:
    """The one run folder that appeared since `before`."""
    new = run_names(root) - before
    assert len(new) == 1, new
    return root / "runs" / new.pop()


def copy_registry(dest: Path, workflows=("tabular-profile",)) -> Path:
    """A minimal registry at `dest`: the named workflows plus their demo tables under data/examples/."""
    for wf in workflows:
        shutil.copytree(ROOT / "workflows" / wf, dest / "workflows" / wf, ignore=IGNORE)
    examples = dest / "data" / "examples"
    examples.mkdir(parents=True)
    for table in (ROOT / "data" / "examples").glob("tabular-*"):
        shutil.copy2(table, examples / table.name)
    return dest


def note_workflow(wf_id: str, title: str, description: str, properties: dict) -> dict:
    """A one-rule workflow (for make_registry) whose contract has an x-sensitive `token`: it writes
    results/note.txt from `label` and never writes the token. For tests of redaction and masking."""
    return {
        "workflow.yaml": f"""\
            id: {wf_id}
            version: 0.1.0
            title: {title}
            description: {description}
            tags: [test, note]
            maintainers: [{{name: snakegate tests}}]
            trust: community
            rules:
              note: {{output: {{note: text}}}}
            outputs:
              note: {{path: results/note.txt, type: text, description: The note.}}
            """,
        "schema.json": json.dumps({
            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "additionalProperties": False, "required": ["token"], "properties": properties,
        }),
        "Snakefile": """\
            rule all:
                input:
                    "results/note.txt",


            rule note:
                output:
                    note="results/note.txt",
                params:
                    label=config["label"],
                    token=config["token"],
                    service=config.get("service", {}),
                shell:
                    "echo {params.label} > {output.note}"
            """,
    }


TOKEN_PARAM = {"type": "string", "minLength": 8, "x-sensitive": True,
               "description": "An API token; never leaves the machine."}
LABEL_PARAM = {"type": "string", "default": "note", "description": "Text written into the note."}


def one_rule_workflow(wf_id: str, title: str, description: str, shell: str, label: dict | None = None,
                      log: bool = False) -> dict:
    """A one-rule workflow with one optional `label` param (LABEL_PARAM unless given) whose job runs `shell`
    (for runs that are slow or fail on purpose); with `log`, the rule has a log file, `{log}` in `shell`."""
    files = note_workflow(wf_id, title, description, {"label": label or LABEL_PARAM})
    files["schema.json"] = files["schema.json"].replace('"required": ["token"]', '"required": []')
    log_lines = """
            log:
                "logs/note.log",""" if log else ""
    files["Snakefile"] = f'''\
        rule all:
            input:
                "results/note.txt",


        rule note:
            output:
                note="results/note.txt",{log_lines}
            params:
                label=config["label"],
            shell:
                "{shell}"
        '''
    return files


TABLE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
    "required": ["table"],
    "properties": {"table": {"type": "string", "x-artifact": "csv-table", "description": "A CSV table."}},
}
TABLE_SNAKEFILE = """\
rule copy:
    input:
        src=config["table"],
    output:
        dst="results/copy.csv",
    shell:
        "cp {input.src:q} {output.dst:q}"
"""


def copy_table_files(wf_id: str, title: str, description: str, snakefile: str = TABLE_SNAKEFILE) -> dict:
    """The files (for make_registry) of a community workflow with one rule copying the `table` param's CSV."""
    return {
        "workflow.yaml": f"""\
            id: {wf_id}
            version: 0.1.0
            title: {title}
            description: {description}
            tags: [test]
            maintainers: [{{name: snakegate tests}}]
            trust: community
            rules:
              copy: {{input: {{src: csv-table}}, output: {{dst: csv-table}}}}
            outputs:
              dst: {{path: results/copy.csv, type: csv-table, description: The copied table.}}
            """,
        "schema.json": json.dumps(TABLE_SCHEMA), "Snakefile": snakefile}


def copy_table_workflow(root: Path, snakefile: str = TABLE_SNAKEFILE, preflight: str | None = None) -> Path:
    """A registry at `root` with workflow `probe` (community): one rule copying the `table` param's CSV, with
    the given Snakefile and preflight.py (for hostile-code tests), and data/t.csv to point `table` at."""
    files = copy_table_files("probe", "Probe", "A one-rule workflow whose preflight.py or Snakefile is under test.",
                             snakefile)
    if preflight is not None:
        files["preflight.py"] = preflight
    make_registry(root, {"probe": files})
    (root / "data" / "t.csv").write_text("a,b\n1,2\n")
    return root


def token_workflow(wf_id: str, title: str, description: str, shell: str, log: bool = False) -> dict:
    """one_rule_workflow whose contract also has the x-sensitive `token` (TOKEN_PARAM), which its job gets
    through params: (`{params.token}` in `shell` prints the secret). For tests of secrets at rest."""
    files = one_rule_workflow(wf_id, title, description, shell, log=log)
    files["schema.json"] = note_workflow(wf_id, title, description,
                                         {"token": TOKEN_PARAM, "label": LABEL_PARAM})["schema.json"]
    label = 'label=config["label"],'
    files["Snakefile"] = files["Snakefile"].replace(label, label + '\n                token=config["token"],')
    return files


# A one-rule workflow whose one param, `note`, takes any JSON value: nothing but the hostile-shape and size checks
# stands between a config's value and a run (tests/config/).
OPEN_NOTE = {
    "workflow.yaml": """\
        id: open-note
        version: 0.1.0
        title: Open note
        description: Writes a fixed note; its one param takes any JSON value.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          note: {output: {note: text}}
        outputs:
          note: {path: results/note.txt, type: text, description: The note.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "properties": {"note": {"description": "Any JSON value; the rule never reads it.", "default": None}},
    }),
    "Snakefile": """\
        rule note:
            output:
                note="results/note.txt",
            params:
                note=config["note"],
            shell:
                "echo written > {output.note}"
        """,
}
