"""What snakegate writes, Snakemake reads back the same; what snakegate reads, it reads as Snakemake does.

Snakemake's own loader (`snakemake.common.configfile.load_configfile`: JSON, then PyYAML's FullLoader
inside YTE) is the judge throughout. Two hypothesis properties: random params written by snakegate come
back equal, type for type; random YAML that snakegate accepts means the same to Snakemake, and every
YAML Snakemake reads is either read identically or refused with one of snakegate's own strictness codes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from snakemake.common.configfile import _load_configfile, load_configfile

from registry_copies import make_registry, snakegate
from snakegate.config.write import dump_config, same
from snakegate.registry.workflows import Registry
from snakegate.config.read import load_config_text
from snakegate.config.template import run_config_template

# Text that YAML 1.1 (Snakemake), YAML 1.2 (ruamel, editors) or both read as something other than text.
TRICKY = ["no", "No", "NO", "on", "off", "yes", "y", "n", "Y", "N", "true", "False", "null", "Null", "~", "",
          "1:20", "-1:20", "190:20:30", "0o12", "012", "0x1F", "0b101", "1_000", "+1", "1e3", "1.0e3", "1.0e+3",
          ".5", "1.", ".nan", ".NaN", ".inf", "-.inf", "2024-01-31", "2024-01-31T10:00:00Z", "2024-1-3 1:2:3",
          "=", "<<", "- x", "? x", "a: b", "a #b", "#c", "&a", "*a", "!tag", "!!str", "%x", "@x", "`x", "|", "> x",
          "'q'", '"d"', "[a]", "{k: v}", " lead", "trail ", "a  b", "a\nb", "a\n\nb\n", "\t", "\r\n", "\x85",
          "a\x85b", "\u2028", "\u2029", "\ufeff", "\x00", "\x07", "ünï©ødé", "🐍 snake", "x" * 300,
          "a " * 150, "\\", "\\n", "---", "...", "__use_yte__", "?", "?1 + 1"]
text = st.one_of(st.sampled_from(TRICKY), st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False), text)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(text, inner, max_size=4)), max_leaves=20)
params = st.dictionaries(text, values, max_size=6)


def snakemake_reads(config_text: str):
    """Snakemake's own loader on a real file, exactly as `--configfile` uses it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(config_text, encoding="utf-8")
        return load_configfile(str(path))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params)
def test_any_params_written_by_snakegate_read_back_equal_through_snakemakes_loader(values):
    config = {"workflow": "w", "version": "1.0.0", "invocation_id": "0" * 64, "params": values}
    written = dump_config(config)
    back = snakemake_reads(written)
    assert same(back, config), written
    assert load_config_text(written, "written") == (back, None)


# ---- reading: the same semantics as Snakemake ----------------------------------------------------------------
# (file text, the value Snakemake and snakegate both read)
SAME_READING = [
    ('columns: [id, "no", no, on, yes, Off]', {"columns": ["id", "no", False, True, True, False]}),
    ("a: 1:20\nb: 0o12\nc: 012\nd: 1e3\ne: 1.0e+3\nf: 0x1F\ng: 1_000\nh: +1",
     {"a": 80, "b": "0o12", "c": 10, "d": "1e3", "e": 1000.0, "f": 31, "g": 1000, "h": 1}),
    ("a: ~\nb: null\nc:\nd: ''", {"a": None, "b": None, "c": None, "d": ""}),
    ("base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  y: 3", {"base": {"x": 1, "y": 2}, "over": {"x": 1, "y": 3}}),
    ("long: >\n  folded\n  text\nkeep: |\n  a\n  b\n", {"long": "folded text\n", "keep": "a\nb\n"}),
    ('{"a": 1e3, "b": [1, 2.5, "no"]}', {"a": 1000.0, "b": [1, 2.5, "no"]}),  # JSON first: 1e3 is a number
    ('"quoted": "ünï 🐍"\n', {"quoted": "ünï 🐍"}),
]


@pytest.mark.parametrize("config_text, expected", SAME_READING, ids=[t.split("\n")[0][:30] for t, _ in SAME_READING])
def test_snakegate_reads_a_config_file_as_snakemake_does(config_text, expected):
    data, error = load_config_text(config_text, "run.yaml")
    assert error is None, error
    assert same(data, expected)
    assert same(snakemake_reads(config_text), expected)


# Random YAML: raw tokens (some invalid, some tagged, some aliased) in block and flow layouts.
TOKENS = ["no", "on", "yes", "Off", "1:20", "0o12", "012", "1e3", "1.0e+3", ".nan", "-.inf", "2024-01-31", "~", "null",
          "x", "hello world", "'quoted'", '"dq \\u00e9"', "''", "1_000", "0x1F", "-7", "+.5", "=", "<<", "'a: b'",
          "[1, 2]", "{k: v}", "!!str 12", "!!int '7'", "!!float '1'", "!!binary aGk=", "!!python/complex 1+2j",
          "!!python/tuple [1, 2]", "!!python/name:os.getcwd", "!!set {a, b}", "!!omap [a: 1]", "&a x", "*a",
          "&b [1, 2]", "*b", "ünï", "1e400", "9" * 30, "0b11", "?", "!local x", "a #c", "'__use_yte__'"]
KEYS = ["a", "b", "no", "on", "1", "1.0", "true", "~", "'a'", "x y", "<<", "__use_yte__", "'no'", "2024-01-31"]


@st.composite
def yaml_documents(draw) -> str:
    def block(depth: int, indent: str) -> list[str]:
        kind = draw(st.sampled_from(["map", "seq", "flow"] if depth < 3 else ["flow"]))
        if kind == "flow":
            return [indent + flow(depth + 1)]
        lines = []
        for _ in range(draw(st.integers(1, 3))):
            head = f"{draw(st.sampled_from(KEYS))}:" if kind == "map" else "-"
            if draw(st.booleans()) and depth < 3:
                lines.append(indent + head)
                lines.extend(block(depth + 1, indent + "  "))
            else:
                lines.append(f"{indent}{head} {draw(st.sampled_from(TOKENS))}")
        return lines

    def flow(depth: int) -> str:
        if depth > 4 or draw(st.booleans()):
            return draw(st.sampled_from(TOKENS))
        items = [flow(depth + 1) for _ in range(draw(st.integers(0, 3)))]
        if draw(st.booleans()):
            return "[" + ", ".join(items) + "]"
        return "{" + ", ".join(f"{draw(st.sampled_from(KEYS))}: {i}" for i in items) + "}"

    return "\n".join(block(0, "")) + "\n"


STRICT_CODES = {"yte_config", "python_tag", "duplicate_key", "yaml_bomb", "too_deep", "too_large"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_documents())
def test_any_yaml_means_the_same_to_snakegate_and_snakemake_or_is_refused_for_a_reason(document):
    ours, error = load_config_text(document, "run.yaml")
    try:
        theirs, their_error = _load_configfile(io.StringIO(document)), None
    except Exception as exc:  # noqa: BLE001 - whatever stops Snakemake's loader
        theirs, their_error = None, exc
    if error is None:
        assert their_error is None, (document, their_error)
        assert same(ours, theirs, nan_equal=True), document
    elif their_error is None:
        assert error.code in STRICT_CODES, (document, error)  # never "invalid" where Snakemake reads a value


# ---- writers: runs, drafts and `snakegate init` ---------------------------------------------------------------
ODD_TABLE = "id,no,on,yes,1:20\n1,2.0,3.5,4,5\n2,2.5,1.0,3,1\n3,1.5,2.0,2,4\n"


@pytest.fixture
def odd_registry(tmp_path) -> Path:
    root = make_registry(tmp_path / "registry")
    (root / "data" / "odd.csv").write_text(ODD_TABLE)
    return root


def test_columns_named_no_and_on_pass_validate_and_run_as_written(odd_registry, tmp_path):
    """The issue's case: YAML 1.2 wrote `no`/`on` bare and Snakemake read them back as false/true."""
    config = tmp_path / "run.yaml"
    config.write_text('workflow: tabular-profile\nparams:\n  dataset_file: data/odd.csv\n'
                      '  columns: [id, "no", "on", "1:20"]\n')
    assert snakegate(odd_registry, "validate", config).returncode == 0
    proc = snakegate(odd_registry, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run_dir] = (odd_registry / "runs").iterdir()
    assert load_configfile(str(run_dir / "config.yaml"))["params"]["columns"] == ["id", "no", "on", "1:20"]
    cleaned = (run_dir / "results" / "cleaned.csv").read_text().splitlines()[0]
    assert cleaned == "id,no,on,1:20"
    # plain Snakemake reads the run's config the same way: it gates and plans the same jobs (into a new folder)
    again = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(run_dir / "config.yaml"),
                            "--config", "run_id=again", "--cores", "1", "-n"], cwd=odd_registry,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_a_chat_draft_with_yaml_11_words_reads_back_unchanged(odd_registry):
    from openai_server import ScriptedOpenAI, call
    from snakegate.agent.backends.choose import OpenAIBackend
    from snakegate.agent.controller import Conversation
    from snakegate.agent.events import DraftReady
    from snakegate.registry.settings import load_settings

    params = {"dataset_file": "data/odd.csv", "columns": ["id", "no", "on", "yes", "1:20"]}
    server = ScriptedOpenAI([[call("validate_params", {"workflow": "tabular-profile", "params": params})], "Ready."])
    server.start()
    try:
        convo = Conversation(Registry.load(odd_registry), load_settings(odd_registry),
                             OpenAIBackend(server.base_url, "scripted-model", api_key="k", timeout=30),
                             conversation_id="c-roundtrip")
        [draft] = [e.draft for e in convo.send("profile odd.csv") if isinstance(e, DraftReady)]
    finally:
        server.stop()
    read = load_configfile(str(draft.config_path))
    assert read["params"]["columns"] == params["columns"]
    assert same(read["params"], draft.params)


TRICKY_DEFAULTS = {"word": "no", "time": "1:20", "octal": "0o12", "lines": "first\nsecond", "text": "ünï 🐍 ✓",
                   "nested": {"on": ["yes", 1, 2.5, None, True]}, "empty": ""}


def test_init_template_reads_back_as_the_defaults_through_snakemakes_loader(tmp_path):
    # required, so the template writes them as values (an optional param's default is commented out)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "additionalProperties": False, "required": list(TRICKY_DEFAULTS),
              "properties": {name: {"description": f"The {name}.", "default": value}
                             for name, value in TRICKY_DEFAULTS.items()}}
    root = make_registry(tmp_path / "registry", {"tricky": {
        "workflow.yaml": "id: tricky\nversion: 0.1.0\ntitle: Tricky\ndescription: Tricky defaults.\ntags: [test]\n"
                         "maintainers: [{name: t}]\ntrust: community\nrules:\n  out: {output: {out: text}}\noutputs:\n"
                         "  out: {path: results/out.txt, type: text, description: Out.}\n",
        "schema.json": json.dumps(schema), "Snakefile": "rule out:\n    output: 'results/out.txt'\n"}})
    registry = Registry.load(root)
    assert not registry.broken, registry.broken
    wf = registry.get("tricky")
    path = tmp_path / "template.yaml"
    path.write_text(run_config_template(wf, root), encoding="utf-8")
    read = load_configfile(str(path))
    assert read["workflow"] == "tricky" and read["version"] == "0.1.0"
    assert same(read["params"], TRICKY_DEFAULTS)
