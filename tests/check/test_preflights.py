"""`snakegate check` proves a workflow's preflight.py: its signature, that it reads no file, that every example
passes it. Pure cases go through the proof with hand-made facts; the end-to-end ones run the real command
on a registry copy whose preflight.py was edited the way a contributor might."""
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from registry_copies import ROOT, clean_env, make_registry
from snakegate.check import WorkflowFacts
from snakegate.check.preflights import preflight_findings

GOOD = "def preflight(params, artifacts):\n    return []\n"


def findings_for(source: str | None) -> list:
    facts = WorkflowFacts(id="wf", folder="/x/workflows/wf", rel="workflows/wf", preflight_source=source,
                          preflight_file="workflows/wf/preflight.py" if source is not None else None)
    return preflight_findings(facts)


def test_a_workflow_without_preflight_and_a_pure_one_have_no_findings():
    assert findings_for(None) == []
    assert findings_for("import math\nfrom collections import Counter\n\n" + GOOD) == []
    for wf in ("surrogate-design", "classifier-benchmark", "pl-power-series", "pump-probe", "variant-calling"):
        assert findings_for((ROOT / "workflows" / wf / "preflight.py").read_text()) == [], wf


@pytest.mark.parametrize("source, says", [
    ("def check(params, artifacts):\n    return []\n", "defines no top-level function `preflight`"),
    ("def preflight(params):\n    return []\n", "it takes (params), not (params, artifacts)"),
    ("def preflight(artifacts, params):\n    return []\n", "not (params, artifacts)"),
    ("def preflight(params, artifacts, extra=1):\n    return []\n", "not (params, artifacts)"),
    ("def preflight(params, artifacts=None):\n    return []\n", "its parameters have defaults"),
    ("def preflight(params, artifacts, *rest, **kw):\n    return []\n", "*args, **kwargs"),
    ("async def preflight(params, artifacts):\n    return []\n", "it is async"),
    ("def preflight(params, artifacts:\n", "does not parse"),
    ("class Holder:\n    def preflight(params, artifacts):\n        return []\n", "no top-level function"),
])
def test_a_preflight_with_the_wrong_shape_is_an_error(source, says):
    found = findings_for(source)
    assert [(f.severity, f.code) for f in found] == [("error", "preflight_invalid")], found
    assert says in found[0].message and found[0].file == "workflows/wf/preflight.py"


@pytest.mark.parametrize("body, says, line", [
    ("import json\n", "imports `json`", 1),
    ("import os.path\n", "imports `os.path`", 1),
    ("from pathlib import Path\n", "imports `pathlib`", 1),
    ("import numpy as np\n", "imports `numpy`", 1),
    ("from snakegate import artifacts\n", "imports `snakegate`", 1),
    ("from . import helpers\n", "imports `.`", 1),
    ("X = 1\nY = open('/etc/passwd').read()\n", "uses `open`", 2),
    ("Z = __import__('os')\n", "uses `__import__`", 1),
    ("Z = eval('1')\n", "uses `eval`", 1),
    ("Z = getattr(object, 'x', None)\n", "uses `getattr`", 1),
    ("Z = ().__class__.__mro__\n", "touches the attribute `__class__`", 1),
])
def test_a_preflight_that_could_read_a_file_is_an_error_naming_the_line(body, says, line):
    found = findings_for(body + GOOD)
    assert [f.code for f in found] and {f.code for f in found} == {"preflight_impure"}, found
    assert any(says in f.message and f.line == line for f in found), [(f.message, f.line) for f in found]
    assert "do the file reading in a rule's script" in found[0].hint


def copy_with(tmp_path: Path, wf: str, preflight: str | None = None, example: str | None = None) -> Path:
    root = make_registry(tmp_path / "reg")
    shutil.copytree(ROOT / "workflows" / wf, root / "workflows" / wf,
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake", "test"))
    for f in (ROOT / "data" / "examples").glob("surrogate-*"):
        shutil.copy(f, root / "data" / "examples" / f.name)
    if preflight is not None:
        (root / "workflows" / wf / "preflight.py").write_text(textwrap.dedent(preflight))
    if example is not None:
        (root / "workflows" / wf / "examples" / "bad.yaml").write_text(textwrap.dedent(example))
    return root


def check(root: Path, wf: str) -> tuple[int, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "check", wf, "--json", "--no-hygiene"], cwd=root,
                          env=clean_env(), capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)["findings"]


def test_check_fails_a_preflight_that_opens_a_file(tmp_path):
    root = copy_with(tmp_path, "surrogate-design", preflight="""\
        def preflight(params, artifacts):
            with open(params["dataset_file"]) as fh:  # reads the data: not allowed
                return [] if fh.readline() else [{"path": "dataset_file", "message": "empty"}]
        """)
    rc, findings = check(root, "surrogate-design")
    assert rc == 1
    bad = [f for f in findings if f["code"] == "preflight_impure"]
    assert bad and bad[0]["file"] == "workflows/surrogate-design/preflight.py" and bad[0]["line"] == 2


def test_check_reports_an_example_the_preflight_refuses(tmp_path):
    root = copy_with(tmp_path, "surrogate-design", example="""\
        workflow: surrogate-design
        params:
          dataset_file: data/examples/surrogate-alloys.csv
          feature_columns: [Fe, Ni, Co, Cr]
          target_properties: [hardness_hv, Cr]
        """)
    rc, findings = check(root, "surrogate-design")
    assert rc == 1
    refused = [f for f in findings if f["code"] == "example_invalid"]
    assert len(refused) == 1 and "bad.yaml: params.target_properties [preflight]" in refused[0]["message"]


def test_check_passes_the_curated_preflights(tmp_path):
    rc, findings = check(copy_with(tmp_path, "surrogate-design"), "surrogate-design")
    assert rc == 0, findings
