"""The preflight purity proof is an allowlist: every string-based way from a name to an object is refused,
naming the line and the construct, and a preflight that slipped past it still cannot read the API key.

Pure cases go through the proof with hand-made facts; the issue's `operator.attrgetter("__globals__")`
bypass also goes through the real `snakegate check` and, as a preflight that got past a check, through the
real gate with the key in the environment.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import ROOT, TABLE_SNAKEFILE, clean_env, copy_table_workflow
from snakegate.check import WorkflowFacts
from snakegate.check.preflights import preflight_findings
from snakegate.gate import sandbox
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

GOOD = "def preflight(params, artifacts):\n    return []\n"
KEY = "sk-purity-test-key-0123456789"
# The bypass from issue 22: reach the module's globals through a string, then the builtins, then os.environ.
ATTRGETTER_BYPASS = """\
import operator


def preflight(params, artifacts):
    scope = operator.attrgetter("__globals__")(preflight)
    found = scope["__builtins__"]
    load = found["__import__"] if isinstance(found, dict) else operator.attrgetter("__import__")(found)
    return [{"path": "table", "message": "ENV " + repr(dict(load("os").environ))}]
"""


def findings_for(source: str) -> list:
    facts = WorkflowFacts(id="wf", folder="/x/workflows/wf", rel="workflows/wf", preflight_source=source,
                          preflight_file="workflows/wf/preflight.py")
    return preflight_findings(facts)


def impure(source: str) -> list[tuple[int, str]]:
    found = findings_for(source)
    assert {f.code for f in found} <= {"preflight_impure"}, found
    return [(f.line, f.message) for f in found]


def test_the_attrgetter_bypass_from_the_issue_is_refused_naming_line_and_construct():
    found = impure(ATTRGETTER_BYPASS)
    assert (5, "preflight.py uses `operator.attrgetter`, which looks an attribute or item up by a string or "
               "evaluates text") in found
    assert any(line == 5 and "`__globals__`" in message for line, message in found)
    assert any(line == 7 and "`__import__`" in message for line, message in found)


@pytest.mark.parametrize("source, line, says", [
    ("from operator import itemgetter\n" + GOOD, 1, "imports `operator.itemgetter`"),
    ("import operator\nCALL = operator.methodcaller('keys')\n" + GOOD, 2, "uses `operator.methodcaller`"),
    ("import string\nFMT = string.Formatter()\n" + GOOD, 2, "uses `string.Formatter`"),
    ("def preflight(params, artifacts):\n    return ['{0.gi_frame}'.format(params)]\n", 2,
     "uses `'{0.gi_frame}'.format`, whose template string can reach attributes"),
    ("def preflight(params, artifacts):\n    name = params['x']\n    return getattr(params, name)\n", 3,
     "uses `getattr`, with a name that is not a literal attribute"),
    ("def preflight(params, artifacts):\n    return getattr(params, '__class__')\n", 2, "uses `getattr`"),
    ("KEY = 'x__globals__x'\n" + GOOD, 1, "holds the string `__globals__`"),
    ("KEY = b'__builtins__'\n" + GOOD, 1, "holds the string `__builtins__`"),
    ("def preflight(params, artifacts):\n    g = (x for x in ())\n    return g.gi_frame.f_back\n", 3,
     "`gi_frame` is not an attribute of the plain data types"),
    ("def preflight(params, artifacts):\n    return type(params)\n", 2, "uses `type`"),
    ("def preflight(params, artifacts):\n    print(params)\n    return []\n", 2, "uses `print`"),
    ("if False:\n    open = dict\n" + GOOD, 2, "uses `open`"),
    ("def helper(vars):\n    return vars\n" + GOOD, 1, "defines the name `vars`"),
    ("from math import *\n" + GOOD, 1, "imports `*` from `math`"),
    ("import typing\nHINTS = typing.get_type_hints\n" + GOOD, 2, "uses `typing.get_type_hints`"),
    ("import enum\nSYS = enum.sys\n" + GOOD, 2, "uses `enum.sys`"),
    ("X = 1\ndef preflight(params, artifacts):\n    global X\n    return []\n", 3, "uses a `global` statement"),
    ("def preflight(params, artifacts):\n    with params as p:\n        return []\n", 2, "uses a `with` statement"),
    ("def preflight(params, artifacts):\n    return params.__class__\n", 2, "touches the attribute `__class__`"),
])
def test_string_based_getters_and_ways_out_are_refused_naming_line_and_construct(source, line, says):
    found = impure(source)
    assert any(at == line and says in message for at, message in found), found


def test_plain_code_a_preflight_needs_passes():
    source = """\
from collections import Counter
from dataclasses import dataclass
import math
import re


@dataclass(frozen=True)
class Span:
    low: float
    high: float

    def empty(self):
        return self.low > self.high


def preflight(params, artifacts):
    table = artifacts.get("table") or {}
    columns = [c.strip().lower() for c in table.get("columns", ())]
    repeated = [c for c, n in Counter(columns).items() if n > 1]
    span = Span(params.get("min", 0), params.get("max", math.inf))
    has_items = getattr(params, "items", None) is not None
    found = [{"path": "table", "message": f"`{c}` repeats ({len(columns)} columns)"} for c in repeated]
    if span.empty() and has_items and re.fullmatch(r"[a-z]+", "ok"):
        found.append({"path": "min", "message": f"min {span.low:g} > max {span.high:g}"})
    return sorted(found, key=lambda f: f["path"])
"""
    assert findings_for(source) == []


def test_every_curated_preflight_passes_the_allowlist():
    for path in sorted((ROOT / "workflows").glob("*/preflight.py")):
        assert findings_for(path.read_text()) == [], path


# ---- end to end ---------------------------------------------------------------------------------------------

VALIDATING_SNAKEFILE = 'from snakemake.utils import validate\n\n\nvalidate(config, "schema.json")\n\n\n' + TABLE_SNAKEFILE


def bypass_registry(tmp_path: Path) -> Path:
    return copy_table_workflow(tmp_path / "reg", VALIDATING_SNAKEFILE, ATTRGETTER_BYPASS)


def test_check_refuses_the_attrgetter_bypass(tmp_path):
    root = bypass_registry(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "check", "probe", "--json", "--no-hygiene"],
                          cwd=root, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    bad = [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "preflight_impure"]
    assert any(f["line"] == 5 and "operator.attrgetter" in f["message"] for f in bad), bad
    assert all(f["file"] == "workflows/probe/preflight.py" and f["severity"] == "error" for f in bad)


def test_the_attrgetter_bypass_run_by_the_gate_anyway_finds_no_api_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SNAKEGATE_LLM_API_KEY", KEY)
    sandbox._stop_worker()  # start the worker with the keys in this process's environment
    root = bypass_registry(tmp_path)
    result = gate(Registry.load(root), {"workflow": "probe", "params": {"table": "data/t.csv"}}, load_settings(root))
    assert not result.ok
    [error] = result.errors
    assert error.message.startswith("ENV {") and "'PATH'" in error.message  # the bypass worked, in the sandbox
    assert KEY not in error.message
