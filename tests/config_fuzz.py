"""The gate fuzzer: hypothesis-made run configs for every workflow, each acceptance judged by an oracle.

`FuzzRegistry.make(dest)` copies the registry's workflows and demo data into
`dest` and adds hostile files: symlinks out of the data root and into it, a
symlink loop, a dangling link, a folder and a FIFO named .csv, a PNG named
.csv, an empty file, files outside every data root. `run_configs(fz)` draws
run configs from each workflow's schema.json: valid values, boundary values,
wrong types, unknown keys, hostile text and numbers, Python objects, deep or
shared structures, and paths inside and outside the data roots; some go
through YAML text (`!!python/...` tags, bombs, YTE and duplicate keys
included) and some through the DAG step. `fuzz_one()` runs one through the
gate and returns an `Outcome`: refused, accepted, exception (anything
escaping the gate) or unjustified (an acceptance the oracle rejects).

The oracle shares no code with the gate: jsonschema on the params after its
own default filling, the invocation meta-schema, `os.path.realpath` for data
roots, pandas for table headers and row counts, Snakemake's own loader for
text, and the writer's read-back for what a run would write.

Used by tests/config/test_fuzz.py (a few hundred examples) and
bench/bench_fuzz.py (10,000). Writes only inside `dest`.
"""

from __future__ import annotations

import copy
import datetime
import io
import json
import math
import os
import shutil
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns("__pycache__", ".snakemake", "*.pyc")
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\x00" * 32
TRICKY_TEXT = ["", " ", "no", "on", "yes", "1:20", "0o12", "1e3", ".nan", "~", "null", "=", "<<", "a: b", "- x",
               "\x00", "a\x00b", "\ud800", "\x85", "\u2028", "\ufeff", "ünï 🐍", "x" * 5000, "$(rm -rf ~)",
               "{input}", "`id`", "; touch /tmp/x", "../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa",
               "builtin:", "%s%n", "\r\n", "\t", "__use_yte__", "?__import__('os')"]
HOSTILE_NUMBERS = [math.nan, math.inf, -math.inf, 2 ** 63, -(2 ** 63) - 1, 16 ** 1200, 10 ** 5000, -0.0,
                   1e308, 5e-324, 2 ** 53 + 1, 2 ** 63 - 1]


def _shared_bomb() -> list:
    value: list = ["lol"] * 10
    for _ in range(6):
        value = [value] * 10
    return value


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


HOSTILE_OBJECTS = [1 + 2j, (1, 2), {1, 2}, b"bytes", datetime.date(2024, 1, 31), os.getcwd, {1: "a"}, {True: 1},
                   {None: 1}, _deep(40), _shared_bomb(), ["x"] * 2000]
WRONG_TYPES = [None, True, False, 0, 1, -1, 1.5, "text", [], {}, ["a"], {"a": 1}, [[1]]]


# ---- the registry under test -----------------------------------------------------------------------------------
@dataclass
class FuzzRegistry:
    root: Path
    outside: Path
    registry: Any
    settings: Any
    paths: list[str] = field(default_factory=list)     # values offered for x-artifact params
    columns: list[str] = field(default_factory=list)   # values offered for x-column-of params
    good_paths: dict[str, list[str]] = field(default_factory=dict)  # artifact type -> demo files of that type
    examples: dict[str, list[dict]] = field(default_factory=dict)  # workflow -> its examples' params

    def variants(self, value: str) -> list[str]:
        """Ways to name the same demo file: inside the data roots (allowed) and through an escape (refused)."""
        name = Path(value).name
        if not (self.root / "data" / "examples" / name).is_file():
            return [value]
        inside = f"data/examples/{name}"
        return [inside, f"./{inside}", str(self.root / inside), f"data/../{inside}", f"data/fuzz/link-{name}",
                f"../outside/{name}", str(self.outside / name), f"data/../../outside/{name}",
                f"data/fuzz/escape-{name}", f"data/examples/../../outside/{name}", f"data/fuzz/../../../outside/{name}"]

    def header(self, value: str) -> list[str]:
        """The first line's names of a table inside the registry (for drawing columns), [] when none."""
        path = self.root / value if not os.path.isabs(value) else Path(value)
        try:
            if not path.is_file():
                return []
            with open(path, encoding="utf-8") as fh:
                return fh.readline().rstrip("\r\n").lstrip("\ufeff").split(",")
        except (OSError, UnicodeDecodeError, ValueError):
            return []

    @classmethod
    def make(cls, dest: Path) -> "FuzzRegistry":
        from snakegate.registry.workflows import Registry
        from snakegate.registry.settings import load_settings

        root, outside = dest / "registry", dest / "outside"
        shutil.copytree(REPO / "workflows", root / "workflows", ignore=IGNORE)
        shutil.copytree(REPO / "snakegate" / "schemas", root / "schemas", ignore=IGNORE)
        shutil.copytree(REPO / "data", root / "data", ignore=IGNORE)
        shutil.copy(REPO / "Snakefile", root / "Snakefile")
        outside.mkdir()
        (outside / "outside.csv").write_text("species,sex\nAdelie,male\n")
        fuzz = root / "data" / "fuzz"
        fuzz.mkdir()
        first_csv = sorted((root / "data").rglob("*.csv"))[0]  # before the FIFO exists
        (fuzz / "escape.csv").symlink_to(outside / "outside.csv")
        (fuzz / "inside-link.csv").symlink_to(first_csv)
        (fuzz / "loop-a.csv").symlink_to(fuzz / "loop-b.csv")
        (fuzz / "loop-b.csv").symlink_to(fuzz / "loop-a.csv")
        (fuzz / "dangling.csv").symlink_to(fuzz / "no-such-file.csv")
        (fuzz / "etc-link").symlink_to("/etc")
        (fuzz / "folder.csv").mkdir()
        os.mkfifo(fuzz / "fifo.csv")
        (fuzz / "image.csv").write_bytes(PNG)
        (fuzz / "empty.csv").write_bytes(b"")
        (fuzz / "header-only.csv").write_text("a,b,no,on\n")
        (fuzz / "bom.csv").write_bytes(b"\xef\xbb\xbfid,value\n1,2\n")
        (fuzz / "ragged.csv").write_text("a,b\n1,2,3\n")
        (fuzz / "dup-header.csv").write_text("a,a\n1,2\n")
        (fuzz / "json.csv").write_text('{"a": 1}\n')
        (fuzz / "one-row.csv").write_text("x,y\n1,2\n")
        for table in sorted((root / "data" / "examples").iterdir()):  # the same bytes outside, reached many ways
            if table.is_file():
                shutil.copy(table, outside / table.name)
                (fuzz / f"escape-{table.name}").symlink_to(outside / table.name)
                (fuzz / f"link-{table.name}").symlink_to(table)
        fz = cls(root=root, outside=outside, registry=Registry.load(root), settings=load_settings(root))
        files = sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*") if not p.is_dir()
                       or p.is_symlink())
        fz.paths = sorted(set(files + [str(root / f) for f in files[:5]] + [
            f"./{files[0]}", f"data/../{files[0]}", f"data/fuzz/../../{files[0]}", "data/fuzz/etc-link/passwd",
            "../outside/outside.csv", str(outside / "outside.csv"), "data/../../outside/outside.csv", "/etc/passwd",
            "/proc/self/environ", "~/x.csv", "", ".", "data", "data/fuzz", "data/no-such.csv", "data/a\x00b.csv",
            "data/" + "x" * 300 + ".csv", "builtin:nope", "BUILTIN:breast_cancer", "data\\examples\\x.csv"]))
        from snakegate.metaschemas import artifact_types

        demo = sorted(p.relative_to(root).as_posix() for p in (root / "data" / "examples").rglob("*") if p.is_file())
        fz.good_paths = {t: [f for f in demo if any(f.endswith(e) for e in spec.get("extensions", []))]
                         for t, spec in artifact_types().items()}
        from snakegate.config.read import read_run_config

        for wf_id in fz.registry.ids():
            for path in fz.registry.get(wf_id).examples():
                data, error = read_run_config(path)
                if error is None and isinstance(data, dict) and isinstance(data.get("params"), dict):
                    fz.examples.setdefault(wf_id, []).append(data["params"])
        columns: set[str] = set()
        for table in (root / "data").rglob("*.csv"):
            if not table.is_file():  # the FIFO would block forever
                continue
            try:
                columns.update(table.read_text(encoding="utf-8").splitlines()[0].lstrip("\ufeff").split(","))
            except (OSError, UnicodeDecodeError, IndexError):
                pass
        fz.columns = sorted(columns | {c.upper() for c in list(columns)[:20]} | {c + " " for c in list(columns)[:20]}
                            | {"", " ", "no", "on", "a", "b", "missing_column"})
        return fz


# ---- drawing run configs from a schema --------------------------------------------------------------------------
def _number(draw, schema: dict, integer: bool) -> Any:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    edges = [v for b in (lo, hi) if b is not None for v in (b, b - 1, b + 1, b - 1e-9, b + 1e-9)]
    if integer:
        inside = st.integers(int(lo) if lo is not None else -10 ** 6, int(hi) if hi is not None else 10 ** 6)
        return draw(st.one_of(inside, st.sampled_from([int(e) for e in edges] or [0])))
    inside = st.floats(lo if lo is not None else -1e6, hi if hi is not None else 1e6, allow_nan=False)
    return draw(st.one_of(inside, st.sampled_from(edges or [0.0]), st.integers(-5, 5)))


def _string(draw, schema: dict, fz: FuzzRegistry) -> str:
    if "pattern" in schema:
        return draw(st.from_regex(schema["pattern"], fullmatch=True))
    lo, hi = schema.get("minLength", 0), schema.get("maxLength", 30)
    return draw(st.one_of(st.text(min_size=lo, max_size=max(lo, hi)), st.sampled_from(fz.columns)))


def _rarely(draw, n: int) -> bool:
    """True about once in `n` draws (hypothesis favours the first choice, so the common case comes first)."""
    return draw(st.sampled_from([False] * (n - 1) + [True]))


@dataclass
class _Pick:
    """One example's drawing state: calm examples are mostly valid, wild ones mostly not."""

    fz: FuzzRegistry
    calm: bool
    headers: dict[str, list[str]] = field(default_factory=dict)  # table param -> the header of the file chosen


def value_for(draw, schema: Any, pick: _Pick, depth: int = 0) -> Any:
    """One value for `schema`: usually valid, sometimes a boundary, a wrong type or something hostile."""
    fz = pick.fz
    if not isinstance(schema, dict):
        schema = {}
    moods = ["valid"] * (80 if pick.calm else 12) + ["wrong_type", "hostile_text", "hostile_number", "hostile_object"]
    mood = draw(st.sampled_from(moods))
    if mood == "wrong_type":
        return copy.deepcopy(draw(st.sampled_from(WRONG_TYPES)))
    if mood == "hostile_text":
        return draw(st.sampled_from(TRICKY_TEXT))
    if mood == "hostile_number":
        return draw(st.sampled_from(HOSTILE_NUMBERS))
    if mood == "hostile_object":
        return draw(st.sampled_from(HOSTILE_OBJECTS))
    if "x-artifact" in schema:
        good = fz.good_paths.get(schema["x-artifact"], []) + list(schema.get("x-builtins") or [])
        if good and (pick.calm or draw(st.booleans())):
            return draw(st.sampled_from(good))
        return draw(st.sampled_from(fz.paths + list(schema.get("x-builtins") or [])))
    if "x-column-of" in schema and schema.get("type") != "array":
        return _column(draw, schema["x-column-of"], pick)
    if "enum" in schema:
        return copy.deepcopy(draw(st.sampled_from(schema["enum"])))
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    types = schema.get("type") or draw(st.sampled_from(["string", "integer", "number", "boolean", "null", "array",
                                                         "object"]))
    kind = draw(st.sampled_from(types)) if isinstance(types, list) else types
    if depth > 3 and kind in ("array", "object"):
        kind = "string"
    if kind == "string":
        return _string(draw, schema, fz)
    if kind in ("integer", "number"):
        return _number(draw, schema, kind == "integer")
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        if "x-column-of" in schema:
            items = {**items, "x-column-of": schema["x-column-of"]}
        lo = schema.get("minItems", 0)
        n = draw(st.integers(max(0, lo - 1), max(lo, 1) + 3))
        return [value_for(draw, items, pick, depth + 1) for _ in range(n)]
    return object_for(draw, schema, pick, depth + 1)


def _column(draw, ref: str, pick: _Pick) -> str:
    header = pick.headers.get(ref)
    if header and draw(st.integers(0, 9)) < (9 if pick.calm else 6):
        return draw(st.sampled_from(header))
    return draw(st.sampled_from(pick.fz.columns))


def object_for(draw, schema: dict, pick: _Pick, depth: int = 0) -> dict:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict = {}
    # tables first, so the columns drawn after them can come from the file actually chosen
    for name, sub in sorted(props.items(), key=lambda item: "x-artifact" not in item[1]):
        if name in required or draw(st.integers(0, 2)) == 0:
            if name in required and _rarely(draw, 30):
                continue  # sometimes a required one is missing
            out[name] = value_for(draw, sub, pick, depth)
        if depth == 0 and "x-artifact" in sub:
            value = out.get(name, sub.get("default"))
            pick.headers[name] = pick.fz.header(value) if isinstance(value, str) else []
    extra = schema.get("additionalProperties")
    names = schema.get("propertyNames") if isinstance(schema.get("propertyNames"), dict) else None
    if isinstance(extra, dict):
        for _ in range(draw(st.integers(0, 2))):
            key = _column(draw, names["x-column-of"], pick) if names and "x-column-of" in names \
                else draw(st.text(max_size=8))
            out[key] = value_for(draw, extra, pick, depth)
    if _rarely(draw, 40 if pick.calm else 10):  # an unknown key: a typo of a real one, or anything
        key = draw(st.one_of(st.sampled_from([n[:-1] + "x" for n in props if n] or ["x"]), st.text(max_size=10)))
        out[key] = value_for(draw, {}, pick, depth)
    return out


@st.composite
def run_configs(draw, fz: FuzzRegistry) -> dict:
    """{"workflow", "invocation": run config, "text": YAML text or None, "dag": bool}."""
    wf_id = draw(st.sampled_from(fz.registry.ids()))
    wf = fz.registry.get(wf_id)
    pick = _Pick(fz, calm=draw(st.booleans()))
    examples = fz.examples.get(wf_id) or []
    if pick.calm and examples:  # a curated example with a few params redrawn: mostly accepted, near the edges
        params = copy.deepcopy(draw(st.sampled_from(examples)))
        props = wf.schema.get("properties") or {}
        for name, sub in props.items():
            if "x-artifact" in sub:
                value = params.get(name, sub.get("default"))
                pick.headers[name] = fz.header(value) if isinstance(value, str) else []
        for name in draw(st.lists(st.sampled_from(sorted(props)), max_size=3, unique=True)) if props else []:
            if _rarely(draw, 5):
                params.pop(name, None)
            elif "x-artifact" in props[name]:
                value = params.get(name, props[name].get("default"))
                if isinstance(value, str):
                    params[name] = draw(st.sampled_from(fz.variants(value)))
            else:
                params[name] = value_for(draw, props[name], pick)
    else:
        params = object_for(draw, wf.schema, pick)
    invocation: dict = {"workflow": wf_id, "params": params}
    shape = draw(st.sampled_from([None] * (100 if pick.calm else 16) + [0, 1, 2, 3]))
    if shape == 0:
        invocation["workflow"] = draw(st.sampled_from([wf_id + "x", wf_id.upper(), "", 3, None, "../" + wf_id]))
    elif shape == 1:
        invocation["version"] = draw(st.sampled_from([wf.manifest.version, "9.9.9", 1.0, "", None]))
    elif shape == 2:
        invocation[draw(st.sampled_from(["invocation_id", "run_id", "parms", "__use_yte__", "workflow_hash"]))] = \
            draw(st.sampled_from(["0" * 64, "../x", "..", "ok-run", "", 7, None]))
    elif shape == 3:
        invocation["params"] = draw(st.sampled_from([None, [], "params", 0]))
    text = None
    route = draw(st.sampled_from(["object"] * 7 + ["dump", "dump", "hostile"]))
    if route == "dump":  # through YAML text: PyYAML's full dumper writes Python objects as !!python/... tags
        try:
            text = yaml.dump(invocation, Dumper=yaml.Dumper, allow_unicode=draw(st.booleans()))
        except (ValueError, yaml.YAMLError, RecursionError):  # 10 ** 5000 cannot even be written
            text = None
    elif route == "hostile":
        text = draw(st.sampled_from(_HOSTILE_DOCUMENTS)).replace("WORKFLOW", wf_id)
    return {"workflow": wf_id, "invocation": invocation, "text": text, "dag": _rarely(draw, 50)}


def _bomb_text() -> str:
    return "workflow: WORKFLOW\nparams:\n  x:\n    - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"    - &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))


_HOSTILE_DOCUMENTS = [
    _bomb_text(), "workflow: WORKFLOW\nparams: &p {x: *p}\n", "__use_yte__: true\nworkflow: WORKFLOW\n",
    "workflow: WORKFLOW\nworkflow: WORKFLOW\n", "workflow: WORKFLOW\nparams: {on: 1, true: 2}\n",
    "workflow: WORKFLOW\nparams: !!python/object/apply:os.getcwd []\n", "workflow: WORKFLOW\nparams:\n  x: [" + "[" * 60
    + "]" * 60 + "]\n", "workflow: WORKFLOW\nparams: {x: 0x" + "f" * 4000 + "}\n", "{\"workflow\": \"WORKFLOW\", "
    "\"params\": {\"x\": NaN}}", "workflow: WORKFLOW\nparams:\n\tx: 1\n", "--- \nworkflow: WORKFLOW\n---\nx: 1\n",
    "workflow: WORKFLOW\nparams: {x: *undefined}\n", "workflow: [unclosed\n", "", "\ufeffworkflow: WORKFLOW\n",
]


# ---- the oracle --------------------------------------------------------------------------------------------------
def _fill(schema: Any, value: Any) -> None:
    if isinstance(schema, dict) and isinstance(value, dict):
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict) and name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if isinstance(sub, dict) and name in value:
                _fill(sub, value[name])


def _annotated(schema: Any, value: Any):
    """(subschema, value, is_key) for every value below params, walking the schema alongside."""
    if not isinstance(schema, dict):
        return
    yield schema, value, False
    if isinstance(value, dict):
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        for key, sub_value in value.items():
            if isinstance(schema.get("propertyNames"), dict):
                yield schema["propertyNames"], key, True
            yield from _annotated(props.get(key, extra if isinstance(extra, dict) else None), sub_value)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            yield from _annotated(schema["items"], item)


class Oracle:
    """Why an accepted run config should have been refused ([] when the acceptance is justified)."""

    def __init__(self, fz: FuzzRegistry):
        self.fz = fz
        self.roots = [os.path.realpath(r) for r in fz.settings.data_roots]
        self.meta = Draft202012Validator(json.loads((REPO / "snakegate" / "schemas" / "invocation.schema.json").read_text()))
        self._tables: dict[tuple[str, str], tuple[list[str], int] | None] = {}

    def _table(self, path: str, type_name: str) -> tuple[list[str], int] | None:
        """(columns, rows) as pandas reads the table (the workflows' own reader), or None."""
        if (path, type_name) not in self._tables:
            import pandas

            try:
                frame = pandas.read_csv(path, dtype=str, keep_default_na=False,
                                        sep="\t" if type_name.startswith("tsv") else ",")
                self._tables[path, type_name] = ([str(c) for c in frame.columns], len(frame))
            except Exception:  # noqa: BLE001 - pandas cannot read it: it is no table
                self._tables[path, type_name] = None
        return self._tables[path, type_name]

    def _real(self, value: str) -> str:
        raw = os.path.expanduser(value)
        return os.path.realpath(raw if os.path.isabs(raw) else os.path.join(self.fz.root, raw))

    def reasons(self, invocation: Any, result) -> list[str]:
        why = [f"invocation: {e.message}" for e in self.meta.iter_errors(_without_null_params(invocation))]
        if why:
            return why
        wf = self.fz.registry.get(invocation["workflow"])
        if wf is None:
            return [f"unknown workflow {invocation['workflow']!r}"]
        if invocation.get("version") not in (None, wf.manifest.version):
            return [f"version {invocation['version']!r} is not {wf.manifest.version}"]
        params = copy.deepcopy(invocation.get("params") or {})
        _fill(wf.schema, params)
        validator = Draft202012Validator(wf.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        why += [f"schema: {e.message[:200]}" for e in validator.iter_errors(params)]
        try:
            json.dumps(params, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            why.append(f"params are not plain JSON: {type(exc).__name__}")
        if why:
            return why
        top = wf.schema.get("properties") or {}
        for sub, value, is_key in _annotated(wf.schema, params):
            if "x-artifact" in sub and not is_key and isinstance(value, str) \
                    and value not in (sub.get("x-builtins") or []):
                real = self._real(value)
                if not any(real == r or real.startswith(r + os.sep) for r in self.roots):
                    why.append(f"{value!r} resolves outside the data roots ({real})")
                elif not os.path.isfile(real):
                    why.append(f"{value!r} is not a regular file")
                elif sub["x-artifact"].endswith("table") and self._table(real, sub["x-artifact"]) is None:
                    why.append(f"{value!r} is not a table pandas can read")
                else:
                    rows = sub.get("x-min-rows")
                    if rows and (self._table(real, sub["x-artifact"]) or ([], 0))[1] < rows:
                        why.append(f"{value!r} has fewer than {rows} rows")
        for sub, value, is_key in _annotated(wf.schema, params):
            ref = sub.get("x-column-of")
            table = params.get(ref) if ref else None
            if not ref or not isinstance(table, str) or table in (top.get(ref, {}).get("x-builtins") or []):
                continue
            header = self._table(self._real(table), top[ref].get("x-artifact", ""))
            names = value if isinstance(value, list) and not is_key else [value]
            for name in names:
                if header is None or name not in header[0]:
                    why.append(f"{name!r} is not a column of {table}")
        return why + _result_reasons(invocation, result, self.roots)


def _without_null_params(invocation: Any) -> Any:
    # `params:` left empty (null) means "no params": documented leniency, the same as leaving it out
    if isinstance(invocation, dict) and "params" in invocation and invocation["params"] is None:
        return {k: v for k, v in invocation.items() if k != "params"}
    return invocation


def _result_reasons(invocation: dict, result, roots: list[str]) -> list[str]:
    """What the accepted result itself must be: canonical JSON, pinned, and writable as a run config."""
    from snakegate.config.write import dump_config, same
    from snakegate.run.entry import explicit_config

    why = []
    try:
        json.dumps(result.invocation.model_dump(), allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        why.append(f"the canonical invocation is not JSON: {exc}")
    if invocation.get("invocation_id") not in (None, result.invocation_id):
        why.append("accepted a config whose invocation_id is not its own")
    for key in result.invocation.inputs:
        if not key.startswith("params"):
            why.append(f"input key {key!r}")
    try:
        config = explicit_config(result, "fuzz-run")
        back = yaml.load(dump_config(config), Loader=yaml.FullLoader)  # Snakemake's YAML loader
        if not same(back, config):
            why.append("the run config snakegate would write does not read back equal")
    except ValueError as exc:
        why.append(f"the accepted params cannot be written as a run config: {exc}")
    return why


# ---- one example ---------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    kind: str          # "accepted" | "refused" | "exception" | "unjustified"
    workflow: str
    codes: list[str] = field(default_factory=list)
    detail: str = ""


def fuzz_one(fz: FuzzRegistry, oracle: Oracle, example: dict) -> Outcome:
    from snakegate.config.write import same
    from snakegate.gate.prove import gate
    from snakegate.config.read import load_config_text

    wf_id, invocation = example["workflow"], example["invocation"]
    try:
        if example["text"] is not None:
            invocation, error = load_config_text(example["text"], "fuzz.yaml")
            if error is not None:
                return Outcome("refused", wf_id, [error.code])
            from snakemake.common.configfile import _load_configfile

            try:
                theirs = _load_configfile(io.StringIO(example["text"]))
            except Exception as exc:  # noqa: BLE001
                return Outcome("unjustified", wf_id, detail=f"read a file Snakemake cannot read ({exc})")
            if not same(invocation, theirs, nan_equal=True):
                return Outcome("unjustified", wf_id, detail="read a file differently from Snakemake")
        result = gate(fz.registry, invocation, fz.settings, check_dag=example["dag"], check_tools=False)
    except Exception:  # noqa: BLE001 - the finding: the gate must never raise
        return Outcome("exception", wf_id, detail=traceback.format_exc(limit=-6))
    if not result.ok:
        bad = [e for e in result.errors if not e.message or e.code is None]
        if bad:
            return Outcome("unjustified", wf_id, detail=f"a refusal without a message: {bad}")
        return Outcome("refused", wf_id, sorted({e.code for e in result.errors}),
                       detail="; ".join(e.message for e in result.errors if "crashed" in e.message)[:300])
    try:
        reasons = oracle.reasons(invocation, result)
    except Exception:  # noqa: BLE001 - an oracle crash is a finding too (about the oracle or the accepted value)
        return Outcome("unjustified", wf_id, detail="oracle crashed: " + traceback.format_exc(limit=-4))
    if reasons:
        return Outcome("unjustified", wf_id, detail="; ".join(reasons)[:600])
    return Outcome("accepted", wf_id)
