"""`snakegate check` warns where a sensitive param reaches a rule's shell: or params: (issue 22 §6): Snakemake
records those in .snakemake/metadata/ and prints the command of a failed job. A value read where Snakemake
records nothing (a script's snakemake.config, a run: block) and a param that is not sensitive are fine.

The real reader (Snakemake's own parser) over small workflow folders, then the pure proof; and the real
`snakegate check` on a registry.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from registry_copies import TOKEN_PARAM, make_registry, token_workflow
from snakegate.check.facts import WorkflowFacts
from snakegate.check.reading import read_workflow
from snakegate.check.sensitive import sensitive_findings

SCHEMA = {"type": "object", "additionalProperties": False, "properties": {
    "label": {"type": "string", "description": "A label."},
    "token": TOKEN_PARAM,
    "service": {"type": "object", "description": "A login.", "properties": {
        "user": {"type": "string", "description": "Who."},
        "password": {"type": "string", "x-sensitive": True, "description": "Its password."}}},
}}


def findings(tmp_path: Path, snakefile: str, **files: str) -> list[tuple[str, str, int, str]]:
    """(rule, where, line, param) of each warning for a workflow folder holding `snakefile`."""
    folder = tmp_path / "wf"
    folder.mkdir()
    (folder / "Snakefile").write_text(textwrap.dedent(snakefile))
    for name, text in files.items():
        (folder / name).write_text(text)
    facts = WorkflowFacts(id="wf", folder=str(folder), rel="workflows/wf", schema=SCHEMA,
                          source=read_workflow(folder))
    out = []
    for f in sensitive_findings(facts):
        assert f.severity == "warning" and f.code == "sensitive_in_command"
        where = f.message.split(" reaches the ")[1].split(":")[0]
        out.append((f.rule, where, f.line, f.message.split("`")[1]))
    return out


def test_a_sensitive_param_in_params_is_named_with_its_rule_and_line(tmp_path):
    assert findings(tmp_path, """\
        rule note:
            output: "note.txt"
            params:
                label=config["label"],
                token=config["token"],
            shell: "echo {params.label} > {output}"
        """) == [("note", "params", 5, "token")]


def test_a_sensitive_param_written_into_the_shell_command_is_named(tmp_path):
    assert findings(tmp_path, """\
        rule note:
            output: "note.txt"
            shell: "curl -H 'Authorization: {config[token]}' -o {output} localhost"
        """) == [("note", "shell", 3, "token")]


def test_an_object_holding_a_sensitive_value_counts_as_the_value(tmp_path):
    assert findings(tmp_path, """\
        rule login:
            output: "login.txt"
            params:
                service=config["service"],
            shell: "echo {params.service} > {output}"
        """) == [("login", "params", 4, "service.password")]


def test_a_secret_read_where_snakemake_records_nothing_is_fine(tmp_path):
    assert findings(tmp_path, """\
        rule scripted:
            output: "a.txt"
            script: "use_token.py"


        rule block:
            output: "b.txt"
            run:
                token = config["token"]
                with open(output[0], "w") as fh:
                    fh.write(str(len(token)))


        rule plain:
            output: "c.txt"
            params:
                label=config["label"],
                user=config["service"]["user"],
            shell: "echo {params.label} {params.user} > {output}"
        """, **{"use_token.py": "open(snakemake.output[0], 'w').write(snakemake.config['token'][:0])\n"}) == []


def test_snakegate_check_reports_the_warning(tmp_path, cli):
    root = make_registry(tmp_path / "registry", {"leaky": token_workflow(
        "leaky", "Leaky", "Prints its token.", "echo {params.token} > {output.note}")})
    code, out, err = cli("--registry", root, "check", "leaky", "--json", "--no-hygiene")
    assert "Traceback" not in out + err
    (found,) = [f for f in json.loads(out)["findings"] if f["code"] == "sensitive_in_command"]
    assert (found["severity"], found["rule"], found["file"], found["line"]) == \
        ("warning", "note", "workflows/leaky/Snakefile", 11)
    assert "sensitive param `token` reaches the params: of rule `note`" in found["message"]
    assert "snakemake.config['token'] in a script:" in found["hint"]
