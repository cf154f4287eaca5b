"""Hostile run configs are refusals with their own code, never a traceback, a hang or a run — on every path:
`snakegate validate` / `snakegate run`, plain `snakemake --configfile` through the top-level Snakefile,
and the chat's `validate_params` (a real OpenAI-compatible server scripting the model's tool calls).

The hostile value sits in `note`, a param whose contract accepts any JSON value, so nothing but the
hostile-shape checks stands between it and a run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openai_server import ScriptedOpenAI, call
from registry_copies import OPEN_NOTE, make_registry, snakegate
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, DraftReady
from snakegate.config.shape import MAX_DEPTH, MAX_VALUES
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

HEAD = "workflow: open-note\nparams:\n"


def bomb(levels: int = 8, width: int = 9) -> str:
    """A ~1 KB "billion laughs": 9 ** 9 values once Snakemake's loader's aliases are expanded."""
    lines = ["  note:", f"    - &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"    - &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return HEAD + "\n".join(lines) + "\n"


def note(value: str) -> str:
    return HEAD + f"  note: {value}\n"


MARKER = "yte-was-evaluated"  # the file a YTE template below creates when anything evaluates it


def yte(marker: Path) -> str:
    return ("__use_yte__: true\n__definitions__:\n"
            f"  - import pathlib; pathlib.Path({str(marker)!r}).write_text('evaluated')\n" + note("?1 + 1"))


# (id, run config text, expected code, expected path)
HOSTILE_FILES = [
    ("alias-bomb", bomb(), "yaml_bomb", ""),
    ("alias-inside-its-own-anchor", note("&a [x, *a]"), "yaml_bomb", "params.note[1]"),
    ("nesting-beyond-the-limit", note("[" * (MAX_DEPTH + 8) + "]" * (MAX_DEPTH + 8)), "too_deep", None),
    ("integer-beyond-64-bits", note(str(2 ** 70)), "too_large", "params.note"),
    ("hex-integer-of-thousands-of-digits", note("0x" + "f" * 5000), "too_large", "params.note"),
    ("sexagesimal-integer-beyond-64-bits", note(":".join(["59"] * 40)), "too_large", "params.note"),
    ("decimal-integer-of-thousands-of-digits", note("9" * 5000), "too_large", ""),
    ("python-complex", note("!!python/complex 1+2j"), "python_tag", "params.note"),
    ("python-name", note("!!python/name:os.system"), "python_tag", "params.note"),
    ("python-tuple", note("!!python/tuple [a, b]"), "python_tag", "params.note"),
    ("python-object-apply", note("!!python/object/apply:os.getcwd []"), "python_tag", "params.note"),
    ("duplicate-key", HEAD + "  note: first\n  note: second\n", "duplicate_key", "params.note"),
    ("duplicate-key-after-yaml-1.1", HEAD + "  note: {on: 1, true: 2}\n", "duplicate_key", "params.note.true"),
    ("nan", note(".nan"), "range", "params.note"),
    ("infinity", note("-.inf"), "range", "params.note"),
    ("key-read-as-a-boolean", note("{yes: 1}"), "type", "params.note"),
    ("key-read-as-a-number", note("{1: a}"), "type", "params.note"),
    ("date", note("2024-01-31"), "type", "params.note"),
    ("binary", note("!!binary aGVsbG8="), "type", "params.note"),
    ("json-duplicate-key", '{"workflow": "open-note", "params": {"note": 1, "note": 2}}', "duplicate_key", ""),
    ("json-nan", '{"workflow": "open-note", "params": {"note": NaN}}', "range", "params.note"),
]
# Snakemake's own loader stops on these before the top-level Snakefile runs (a traceback for the first, "not
# valid JSON or YAML" for the second; see the README), so no gate message can appear.
SNAKEMAKE_STOPS_FIRST = {"decimal-integer-of-thousands-of-digits", "python-object-apply"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    return make_registry(tmp_path_factory.mktemp("hostile") / "registry", {"open-note": OPEN_NOTE})


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def no_runs(root: Path) -> bool:
    runs = root / "runs"
    return not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize("text, code, path", [c[1:] for c in HOSTILE_FILES], ids=[c[0] for c in HOSTILE_FILES])
def test_hostile_config_is_refused_by_validate_with_its_code(registry, tmp_path, cli, text, code, path):
    exit_code, out, err = cli("--registry", registry, "validate", "--json", write(tmp_path, "run", text))
    assert exit_code == 1 and "Traceback" not in out + err, out + err
    result = json.loads(out)
    assert result["ok"] is False
    [error] = result["errors"]
    assert error["code"] == code, error
    if path is not None:
        assert error["path"] == path, error
    assert error["hint"], error  # every refusal names a fix


@pytest.mark.parametrize("text, code, path",
                         [c[1:] for c in HOSTILE_FILES if c[0] not in SNAKEMAKE_STOPS_FIRST],
                         ids=[c[0] for c in HOSTILE_FILES if c[0] not in SNAKEMAKE_STOPS_FIRST])
def test_hostile_config_is_refused_by_plain_snakemake_before_any_job(registry, tmp_path, text, code, path):
    config = write(tmp_path, "run", text)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=registry, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"[{code}]" in out and "snakegate gate refused" in out, out
    assert "Traceback" not in out, out
    assert no_runs(registry)


def test_snakegate_run_refuses_an_alias_bomb_and_leaves_no_run(registry, tmp_path):
    proc = snakegate(registry, "run", write(tmp_path, "bomb", bomb()), timeout=120)
    assert proc.returncode == 1
    assert "[yaml_bomb]" in proc.stderr + proc.stdout
    assert no_runs(registry)


@pytest.mark.parametrize("command", ["validate", "run"])
def test_yte_config_is_refused_by_validate_and_run_without_evaluating_it(registry, tmp_path, command):
    marker = tmp_path / MARKER
    proc = snakegate(registry, command, write(tmp_path, "template", yte(marker)), timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "[yte_config]" in out and "Python code" in out, out
    assert not marker.exists()
    assert no_runs(registry)


def test_yte_example_is_refused_by_check_without_evaluating_it(tmp_path):
    root = make_registry(tmp_path / "registry")
    marker = tmp_path / MARKER
    example = root / "workflows" / "tabular-profile" / "examples" / "templated.yaml"
    example.write_text(yte(marker).replace("workflow: open-note", "workflow: tabular-profile")
                       .replace("  note: ?1 + 1\n", "  dataset_file: data/examples/tabular-penguins.csv\n"))
    proc = snakegate(root, "check", "tabular-profile", timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "templated.yaml" in proc.stdout and "yte_config" in proc.stdout, proc.stdout
    assert not marker.exists()


def test_plain_snakemake_stops_a_yte_config_and_says_why(registry, tmp_path):
    """Snakemake evaluates the template while loading the file, before the Snakefile's first line: the
    top-level Snakefile cannot prevent that, but the run must not go ahead and must say why."""
    marker = tmp_path / MARKER
    config = write(tmp_path, "template", yte(marker))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=registry, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "[yte_config]" in out and "already evaluated" in out, out
    assert marker.exists()  # the honest part: Snakemake did evaluate it (the README says so)
    assert no_runs(registry)


# ---- the chat: the model's tool-call arguments, as JSON text on the wire ------------------------------------
def _arguments(note_json: str) -> str:
    return '{"workflow": "open-note", "params": {"note": ' + note_json + "}}"


# (id, the JSON text of `note` the model sends, expected code in the tool result)
HOSTILE_ARGUMENTS = [
    ("nesting-beyond-the-limit", "[" * (MAX_DEPTH + 8) + "]" * (MAX_DEPTH + 8), "too_deep"),
    ("integer-beyond-64-bits", str(2 ** 70), "too_large"),
    ("integer-of-4000-digits", "9" * 4000, "too_large"),
    ("nan", "NaN", "range"),
    ("infinity", "-Infinity", "range"),
    ("values-beyond-the-argument-cap", "[" + ",".join(["0"] * (MAX_VALUES + 1)) + "]", "arguments_too_large"),
    ("key-repeated", '1, "note": 2', "bad_arguments"),
    ("integer-of-5000-digits", "9" * 5000, "bad_arguments"),
    ("nesting-past-pythons-recursion-limit", "[" * 5_000 + "]" * 5_000, "bad_arguments"),
]


@pytest.mark.parametrize("note_json, code", [c[1:] for c in HOSTILE_ARGUMENTS], ids=[c[0] for c in HOSTILE_ARGUMENTS])
def test_hostile_arguments_to_validate_params_are_refused_with_no_draft(registry, note_json, code):
    server = ScriptedOpenAI([[call("validate_params", _arguments(note_json))], "Refused."])
    server.start()
    try:
        backend = OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=30)
        convo = Conversation(Registry.load(registry), load_settings(registry), backend, conversation_id="c-hostile")
        events = convo.send("note this")
    finally:
        server.stop()
    [called] = [e for e in events if isinstance(e, ActionCalled)]
    assert not called.ok
    assert not any(isinstance(e, DraftReady) for e in events)
    result = json.loads([m for m in server.requests[-1]["messages"] if m["role"] == "tool"][0]["content"])
    codes = [e["code"] for e in result["errors"]] if "errors" in result else [result["error"]["code"]]
    assert codes == [code], result
    assert not (registry / "drafts").exists() or not any((registry / "drafts").iterdir())


def test_shared_structure_bomb_in_memory_is_refused_without_walking_it(registry):
    """What Snakemake's loader hands the Snakefile for a YAML alias bomb: one list shared 9 ** 9 times over."""
    value: list = ["lol"] * 9
    for _ in range(8):
        value = [value] * 9
    result = gate(Registry.load(registry), {"workflow": "open-note", "params": {"note": value}},
                  load_settings(registry), check_dag=False)
    assert [(e.code, e.path) for e in result.errors] == [("yaml_bomb", "")]


def test_python_objects_in_memory_are_refused_as_types(registry):
    for value in (1 + 2j, (1, 2), {1, 2}, b"bytes", os.getcwd):
        result = gate(Registry.load(registry), {"workflow": "open-note", "params": {"note": value}},
                      load_settings(registry), check_dag=False)
        assert [(e.code, e.path) for e in result.errors] == [("type", "params.note")], value


def test_the_loader_refuses_an_alias_bomb_from_its_events_before_building_anything(tmp_path):
    """The file path never builds the shared structure at all: the size is counted on PyYAML's events."""
    from snakegate.config.read import read_run_config

    data, error = read_run_config(write(tmp_path, "bomb", bomb()))
    assert data is None and error.code == "yaml_bomb"
    assert "once its YAML aliases are expanded" in error.message
