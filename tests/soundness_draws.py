"""Gate-accepted run configs for every workflow, drawn with hypothesis over its contract, and what happens
when they run: the measure of the gate's soundness (what it accepts runs).

`SoundRegistry.make(dest)` is a throw-away registry: the top-level Snakefile, every workflow of the
checkout (test cases left out) and the demo data. `draws(workflow)` is a hypothesis strategy of `Draw`s:
params over the workflow's schema.json (enums, ranges, columns of the drawn table; costly values capped so
a run stays short) and input files made from the demo data (tables: row subsets, rare classes, gaps,
stray text, infinity, column subsets; detector stacks: fewer delays and shots, cropped, a NaN; references,
reads, VCFs and GFF3s: subsets, renamed contigs). `gate_draw` writes a draw's files under
data/drawn/<sha256>/ (the same content, the same path) and gates it in-process; `run_draw` runs an
accepted one with `snakegate run` (real Snakemake) and returns an `Outcome` read from the run's record:
succeeded, failed in a job (the rule and its error, normalised into a `kind`) or refused at run time.

Used by bench/bench_soundness.py (many draws per workflow) and tests/gate/test_soundness.py (a handful
of cheap ones). Writes only inside the registry it made.
"""

from __future__ import annotations

import collections
import csv
import gzip
import hashlib
import io
import json
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "data" / "examples"
WORKFLOWS = ("classifier-benchmark", "tabular-profile", "surrogate-design", "pl-power-series", "pump-probe",
             "variant-annotation", "variant-calling")
STRAY_TEXT = ("n.d.", "<0.1", "abc", "?", "NAN")


@dataclass
class Draw:
    workflow: str
    params: dict
    files: dict[str, bytes] = field(default_factory=dict)  # placeholder name -> content; params name them

    def config(self, paths: dict[str, str]) -> dict:
        """The run config with each file placeholder replaced by its registry-relative path."""
        def fill(value):
            if isinstance(value, str) and value in paths:
                return paths[value]
            if isinstance(value, list):
                return [fill(v) for v in value]
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value
        return {"workflow": self.workflow, "params": fill(self.params)}


@dataclass
class Outcome:
    status: str                    # refused | succeeded | failed | refused_at_run | error
    workflow: str
    config: dict
    codes: list[str] = field(default_factory=list)  # gate refusal codes
    rule: str | None = None
    error: str | None = None
    kind: str | None = None        # the error, normalised (numbers and quoted values out) for grouping
    run_id: str | None = None


# ---- the registry -------------------------------------------------------------------------------------------

class SoundRegistry:
    def __init__(self, root: Path):
        self.root = root

    @classmethod
    def make(cls, dest: Path, workflows: tuple[str, ...] = WORKFLOWS) -> "SoundRegistry":
        ignore = shutil.ignore_patterns("__pycache__", ".snakemake", "*.pyc", "test")
        (dest / "workflows").mkdir(parents=True)
        shutil.copy(REPO / "Snakefile", dest / "Snakefile")
        shutil.copytree(REPO / "snakegate" / "schemas", dest / "schemas", ignore=shutil.ignore_patterns("__pycache__"))
        for wf in workflows:
            shutil.copytree(REPO / "workflows" / wf, dest / "workflows" / wf, ignore=ignore)
        shutil.copytree(EXAMPLES, dest / "data" / "examples")
        return cls(dest)

    def write(self, draw: Draw) -> dict[str, str]:
        """Write the draw's files (content-addressed) and return placeholder -> registry-relative path."""
        paths = {}
        for name, content in sorted(draw.files.items()):
            digest = hashlib.sha256(content).hexdigest()[:16]
            rel = f"data/drawn/{digest}/{name}"
            path = self.root / rel
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            paths[name] = rel
        return paths


def gate_draw(reg: SoundRegistry, draw: Draw, registry=None, settings=None) -> tuple[dict, list]:
    """(config, gate errors) of one draw, gated in-process with the DAG step, as `snakegate validate` does."""
    from snakegate.gate.prove import gate
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    config = draw.config(reg.write(draw))
    result = gate(registry or Registry.load(reg.root), config, settings or load_settings(reg.root))
    return config, [] if result.ok else result.errors


def accepted(reg: SoundRegistry, workflow: str, wanted: int, seed: int = 0, tries: int = 400,
             on_accepted=None) -> tuple[collections.Counter, collections.Counter, list[dict]]:
    """Draw configs for `workflow` (hypothesis, fixed seed) until `wanted` distinct ones pass the gate or
    `tries` draws were made; call `on_accepted(config)` on each as it comes. Returns (tally of drawn, refused
    and accepted-again draws; refusal codes; the accepted configs)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry

    registry, config_settings = Registry.load(reg.root), load_settings(reg.root)
    tally, codes, configs, seen = collections.Counter(), collections.Counter(), [], set()

    @hypothesis_seed(seed)
    @settings(max_examples=tries, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one(data):
        drawn = data.draw(draws(workflow))  # drawn before deciding: hypothesis wants the same draws every run
        if len(configs) >= wanted:
            return
        tally["drawn"] += 1
        config, errors = gate_draw(reg, drawn, registry, config_settings)
        if errors:
            tally["refused"] += 1
            codes.update({e.code for e in errors})
            return
        if repr(config) in seen:  # the same accepted config drawn twice counts once
            tally["repeated"] += 1
            return
        seen.add(repr(config))
        configs.append(config)
        if on_accepted is not None:
            on_accepted(config)

    one()
    return tally, codes, configs


def normalise(error: str | None) -> str:
    """An error message with its numbers, quoted values and paths taken out, for grouping by kind."""
    text = (error or "").strip()
    text = re.sub(r"/\S+", "<path>", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", text)
    text = re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:160]


def run_draw(reg: SoundRegistry, config: dict, cores: int = 1, timeout: float = 900) -> Outcome:
    """Run one accepted config with `snakegate run` and read what happened from its record."""
    runs = reg.root / "runs"
    before = {p.name for p in runs.iterdir()} if runs.is_dir() else set()
    name = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
    path = reg.root / f"config-{name}.json"
    path.write_text(json.dumps(config))  # JSON is YAML
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("SNAKEGATE_")}
    try:
        proc = subprocess.run([sys.executable, "-m", "snakegate.cli", "run", path.name, "--cores", str(cores)],
                              cwd=reg.root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome("error", config["workflow"], config, error=f"timed out after {timeout:.0f} s",
                       kind="timeout")
    after = {p.name for p in runs.iterdir()} if runs.is_dir() else set()
    new = sorted(after - before)
    if not new:
        said = (proc.stdout + proc.stderr).strip().splitlines()
        return Outcome("refused_at_run", config["workflow"], config, error=" ".join(said[-3:])[:500],
                       kind=normalise(" ".join(said[-3:])))
    record = json.loads((runs / new[0] / "run.json").read_text())
    if record.get("status") == "succeeded" and proc.returncode == 0:
        return Outcome("succeeded", config["workflow"], config, run_id=new[0])
    error = record.get("error") or f"status {record.get('status')}, exit {proc.returncode}"
    return Outcome("failed", config["workflow"], config, rule=record.get("failed_rule"), error=error,
                   kind=normalise(error), run_id=new[0])


# ---- tables -------------------------------------------------------------------------------------------------

def read_table(name: str, delimiter: str = ",") -> tuple[list[str], list[list[str]]]:
    with open(EXAMPLES / name, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=delimiter))
    return rows[0], rows[1:]


def table_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def _numeric(rows: list[list[str]], i: int) -> bool:
    for row in rows:
        try:
            float(row[i])
        except ValueError:
            if row[i] != "":
                return False
    return True


@st.composite
def table_variant(draw, base: str, *, keep_columns: list[str] | None = None, min_rows: int = 2):
    """A table made from a demo table: a row subset, some gaps, stray text or infinity in a numeric column,
    a duplicated row, a column subset (the columns in `keep_columns` always kept)."""
    header, rows = read_table(base)
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    n = draw(st.one_of(st.integers(min_rows, min(len(rows), 12)), st.integers(min_rows, len(rows)),
                       st.just(len(rows))))
    rows = [list(r) for r in rng.sample(rows, n)]
    if draw(st.booleans()):
        optional = [c for c in header if c not in (keep_columns or [])]
        dropped = set(draw(st.lists(st.sampled_from(optional), max_size=max(0, len(optional) - 1), unique=True))) \
            if optional else set()
        keep = [i for i, c in enumerate(header) if c not in dropped]
        header = [header[i] for i in keep]
        rows = [[r[i] for i in keep] for r in rows]
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["gap", "gaps", "stray", "inf", "duplicate"]))
        col = draw(st.integers(0, len(header) - 1))
        if what == "gap":
            rng.choice(rows)[col] = ""
        elif what == "gaps":
            for row in rng.sample(rows, max(1, len(rows) // 3)):
                row[col] = ""
        elif what == "stray" and _numeric(rows, col):
            rng.choice(rows)[col] = draw(st.sampled_from(STRAY_TEXT))
        elif what == "inf" and _numeric(rows, col):
            rng.choice(rows)[col] = "inf"
        elif what == "duplicate":
            rows.append(list(rng.choice(rows)))
    return header, rows


def schema_of(workflow: str) -> dict:
    return json.loads((REPO / "workflows" / workflow / "schema.json").read_text())["properties"]


def number(prop: dict, lo: float | None = None, hi: float | None = None, integer: bool = False):
    """A value inside the schema's bounds (and the cost caps lo/hi when given)."""
    low = prop.get("minimum", prop.get("exclusiveMinimum"))
    high = prop.get("maximum", prop.get("exclusiveMaximum"))
    low = lo if low is None else (low if lo is None else max(low, lo))
    high = hi if high is None else (high if hi is None else min(high, hi))
    if integer:
        return st.integers(int(low if low is not None else 0), int(high if high is not None else 1000))
    strategy = st.floats(low if low is not None else -1e3, high if high is not None else 1e3, allow_nan=False,
                         exclude_min="exclusiveMinimum" in prop, exclude_max="exclusiveMaximum" in prop)
    return strategy.map(lambda x: round(x, 4)).filter(
        lambda x: ("exclusiveMinimum" not in prop or x > prop["exclusiveMinimum"])
        and ("minimum" not in prop or x >= prop["minimum"]) and ("maximum" not in prop or x <= prop["maximum"]))


# ---- one strategy per workflow ------------------------------------------------------------------------------

@st.composite
def classifier_draw(draw):
    props = schema_of("classifier-benchmark")
    params = {"test_fraction": draw(number(props["test_fraction"])),
              "model": draw(st.sampled_from(props["model"]["enum"])),
              "categorical_encoding": draw(st.sampled_from(props["categorical_encoding"]["enum"])),
              "seed": draw(st.integers(0, 50))}
    if params["model"] == "logistic_regression":
        params["C"] = draw(st.sampled_from([0.01, 0.1, 1.0, 10.0]))
        params["standardize"] = draw(st.booleans())
        params["max_iter"] = draw(st.integers(1, 300))
    if draw(st.integers(0, 9)) == 0:
        params["dataset"] = "builtin:breast_cancer"
        if draw(st.booleans()):
            features = list(_builtin_features())  # the preflight's own list, so a draw names real features
            params["feature_columns"] = draw(st.lists(st.sampled_from(features + ["target"]), min_size=1,
                                                      max_size=4, unique=True))
        return Draw("classifier-benchmark", params)
    base = draw(st.sampled_from(["tabular-penguins.csv", "classifier-wine.csv"]))
    header, rows = draw(table_variant(base, min_rows=4))
    # a class-like column most of the time (a few values), any column sometimes
    few = [c for i, c in enumerate(header) if 1 < len({r[i] for r in rows}) <= 6]
    label = draw(st.sampled_from(few)) if few and draw(st.integers(0, 4)) else draw(st.sampled_from(header))
    li = header.index(label)
    if draw(st.booleans()):  # make one class rare: keep only k of its rows
        values = sorted({r[li] for r in rows if r[li]})
        if values:
            rare, k = draw(st.sampled_from(values)), draw(st.integers(0, 3))
            kept, seen = [], 0
            for r in rows:
                if r[li] == rare:
                    seen += 1
                    if seen > k:
                        continue
                kept.append(r)
            rows = kept
    params["dataset"] = "table.csv"
    params["label_column"] = label
    if draw(st.booleans()):
        others = [c for c in header if c != label]
        chosen = draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True)) \
            if others else [label]
        if draw(st.integers(0, 9)) == 0:
            chosen = chosen + [label]
        params["feature_columns"] = chosen
    return Draw("classifier-benchmark", params, {"table.csv": table_bytes(header, rows)})


def _builtin_features() -> tuple[str, ...]:
    text = (REPO / "workflows" / "classifier-benchmark" / "preflight.py").read_text()
    block = text[text.index("BUILTIN_FEATURES = ("):text.index(")\n", text.index("BUILTIN_FEATURES = ("))]
    return tuple(re.findall(r'"([^"]+)"', block))


@st.composite
def tabular_draw(draw):
    props = schema_of("tabular-profile")
    base = draw(st.sampled_from(["tabular-penguins.csv", "surrogate-alloys.csv", "classifier-wine.csv"]))
    header, rows = draw(table_variant(base, min_rows=1))
    params = {"dataset_file": "table.csv",
              "missing_strategy": draw(st.sampled_from(props["missing_strategy"]["enum"])),
              "drop_duplicates": draw(st.booleans())}
    if draw(st.booleans()):
        params["columns"] = draw(st.lists(st.sampled_from(header), min_size=1, max_size=len(header), unique=True))
    return Draw("tabular-profile", params, {"table.csv": table_bytes(header, rows)})


ALLOY_FEATURES = ["Fe", "Ni", "Co", "Cr"]
ALLOY_TARGETS = ["hardness_hv", "yield_strength_mpa"]


@st.composite
def surrogate_draw(draw):
    props = schema_of("surrogate-design")
    header, rows = draw(table_variant("surrogate-alloys.csv", keep_columns=ALLOY_FEATURES + ALLOY_TARGETS,
                                      min_rows=2))
    features = draw(st.lists(st.sampled_from(ALLOY_FEATURES + ["alloy_id"] * (draw(st.integers(0, 9)) == 0)),
                             min_size=1, max_size=4, unique=True))
    targets = draw(st.lists(st.sampled_from(ALLOY_TARGETS + (["Fe"] if draw(st.integers(0, 9)) == 0 else [])),
                            min_size=1, max_size=2, unique=True))
    model = draw(st.sampled_from(props["model"]["enum"]))
    strategies = props["validation_strategy"]["enum"]
    if model == "random_forest" and len(rows) > 30:
        strategies = [s for s in strategies if s != "leave-one-out"]  # one forest per row: minutes
    constraints = {}
    for name in draw(st.lists(st.sampled_from(features), max_size=len(features), unique=True)):
        bounds = {}
        if draw(st.booleans()):
            bounds["min"] = draw(st.sampled_from([0, 5, 10, 20, 30, 50]))
        if draw(st.booleans()):
            bounds["max"] = draw(st.sampled_from([5, 10, 25, 40, 60, 100]))
        constraints[name] = bounds
    objective = {t: draw(st.sampled_from(["maximize", "minimize"]))
                 for t in draw(st.lists(st.sampled_from(targets), max_size=len(targets), unique=True))}
    params = {"dataset_file": "table.csv", "feature_columns": features, "target_properties": targets,
              "validation_strategy": draw(st.sampled_from(strategies)), "model": model, "constraints": constraints,
              "objective": objective, "n_candidates": draw(st.sampled_from([1, 5, 50, 1000])),
              "seed": draw(st.integers(0, 50))}
    return Draw("surrogate-design", params, {"table.csv": table_bytes(header, rows)})


@st.composite
def pl_draw(draw):
    props = schema_of("pl-power-series")
    base, unit = draw(st.sampled_from([("pl-campaign.csv", "nm"), ("pl-campaign-um.csv", "um")]))
    header, rows = read_table(base)
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    powers = sorted({r[0] for r in rows}, key=float)
    keep = set(rng.sample(powers, draw(st.integers(1, len(powers)))))
    step = draw(st.sampled_from([1, 1, 2, 5, 20]))
    window = draw(st.sampled_from([None, None, (0.0, 0.3), (0.4, 0.6), (0.45, 0.5)]))
    by_power: dict[str, list] = {}
    for r in rows:
        if r[0] in keep:
            by_power.setdefault(r[0], []).append(r)
    picked = []
    for group in by_power.values():
        group = group[::step]
        if window:
            group = group[int(window[0] * len(group)):max(int(window[1] * len(group)), int(window[0] * len(group)) + 1)]
        picked += group
    rows = [list(r) for r in picked]
    for _ in range(draw(st.integers(0, 2))):
        what, col = draw(st.sampled_from(["gap", "stray", "zero"])), draw(st.integers(0, 2))
        row = rng.choice(rows)
        row[col] = {"gap": "", "stray": draw(st.sampled_from(STRAY_TEXT)), "zero": "0"}[what]
    names = list(header)
    columns = {"power_column": names[0], "wavelength_column": names[1], "counts_column": names[2]}
    if draw(st.integers(0, 9)) == 0:
        columns["counts_column"] = names[draw(st.integers(0, 2))]
    params = {"spectra_file": "spectra.csv", **columns,
              "wavelength_unit": unit if draw(st.integers(0, 5)) else draw(st.sampled_from(["nm", "um"])),
              "despike": draw(st.booleans()), "despike_threshold": draw(number(props["despike_threshold"], hi=20)),
              "profile": draw(st.sampled_from(props["profile"]["enum"])),
              "window_fwhm": draw(number(props["window_fwhm"])),
              "intensity_metric": draw(st.sampled_from(props["intensity_metric"]["enum"])),
              "r2_min": draw(number(props["r2_min"])),
              "saturation_boundary": draw(st.one_of(st.none(), st.sampled_from([0.5, 10, 50, 1000])))}
    return Draw("pl-power-series", params, {"spectra.csv": table_bytes(header, rows)})


@st.composite
def pump_probe_draw(draw):
    import numpy as np

    with np.load(EXAMPLES / "pump-probe" / "frames.npz") as data:
        frames, delays = data["frames"], data["delays_ps"]
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    chosen = sorted(rng.sample(range(len(delays)), draw(st.integers(2, len(delays)))))
    shots = draw(st.integers(1, frames.shape[1]))
    rows, cols = draw(st.integers(8, 32)), draw(st.integers(8, 32))
    frames = frames[chosen, :shots, :rows, :cols]
    delays = delays[chosen]
    if draw(st.integers(0, 9)) == 0:
        frames = frames.astype(np.float64)
        frames[0, 0, 0, 0] = np.nan
    if draw(st.integers(0, 9)) == 0:
        delays = delays.astype(np.float64).copy()
        delays[-1] = delays[0]  # a repeated delay
    out = io.BytesIO()
    np.savez(out, frames=frames, delays_ps=delays)

    def roi():
        r0, c0 = draw(st.integers(0, 34)), draw(st.integers(0, 34))
        return [r0, r0 + draw(st.integers(1, 12)), c0, c0 + draw(st.integers(1, 16))]

    params = {"data_file": "frames.npz", "signal_roi": roi(), "background_roi": roi(),
              "time_zero_ps": draw(st.sampled_from([-3.0, -1.0, 0.0, 0.3, 2.0, 9.0])),
              "n_bootstrap": draw(st.integers(100, 300)), "seed": draw(st.integers(0, 50))}
    return Draw("pump-probe", params, {"frames.npz": out.getvalue()})


def _fasta(records: list[tuple[str, str]]) -> bytes:
    return "".join(f">{name}\n" + "\n".join(seq[i:i + 60] for i in range(0, len(seq), 60)) + "\n"
                   for name, seq in records).encode()


@st.composite
def variant_calling_draw(draw):
    lines = (EXAMPLES / "variant-calling" / "reference.fa").read_text().splitlines()
    name, seq = lines[0][1:].split()[0], "".join(lines[1:])
    shape = draw(st.sampled_from(["as is", "as is", "two contigs", "lower case", "duplicate name", "renamed"]))
    records = {"as is": [(name, seq)], "two contigs": [(name, seq[:25000]), ("synth2", seq[25000:])],
               "lower case": [(name, seq.lower())], "duplicate name": [(name, seq[:25000]), (name, seq[25000:])],
               "renamed": [("chr1 the first", seq)]}[shape]
    files = {"reference.fa": _fasta(records)}
    samples = []
    for i in range(draw(st.integers(1, 2))):
        source = draw(st.sampled_from(["alpha", "beta"]))
        reads = f"{source}.fq.gz"
        n_reads = draw(st.sampled_from([None, None, 1, 200]))
        if n_reads is not None:
            with gzip.open(EXAMPLES / "variant-calling" / reads, "rt") as fh:
                text = "".join(line for _, line in zip(range(4 * n_reads), fh))
            reads = f"{source}-{n_reads}.fq.gz"
            files[reads] = gzip.compress(text.encode(), mtime=0)
        else:
            files[reads] = (EXAMPLES / "variant-calling" / reads).read_bytes()
        samples.append({"name": draw(st.sampled_from([source, f"s{i}", "x"])), "reads": reads})
    params = {"reference": "reference.fa", "samples": samples, "min_mapq": draw(st.integers(0, 60)),
              "min_base_quality": draw(st.integers(0, 60)), "threads": draw(st.integers(1, 2))}
    return Draw("variant-calling", params, files)


@st.composite
def variant_annotation_draw(draw):
    vcf = (EXAMPLES / "variant-annotation" / "calls.vcf").read_text().splitlines(keepends=True)
    gff = (EXAMPLES / "variant-annotation" / "features.gff3").read_text().splitlines(keepends=True)
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    header = [line for line in vcf if line.startswith("#")]
    records = [line for line in vcf if not line.startswith("#")]
    records = sorted(rng.sample(records, draw(st.integers(0, len(records)))), key=lambda l: int(l.split("\t")[1]))
    features = [line for line in gff if not line.startswith("#")]
    kept = rng.sample(features, draw(st.integers(0, len(features))))
    gff_lines = [line for line in gff if line.startswith("#")] + [f for f in features if f in kept]
    vcf_text, gff_text = "".join(header + records), "".join(gff_lines)
    if draw(st.integers(0, 5)) == 0:
        gff_text = gff_text.replace("synth1", "chr1")
    types = sorted({f.split("\t")[2] for f in features})
    params = {"vcf": "calls.vcf", "features": "features.gff3"}
    if draw(st.booleans()):
        params["feature_types"] = draw(st.lists(st.sampled_from(types + ["intron", "Gene"]), min_size=1,
                                                max_size=4, unique=True))
    return Draw("variant-annotation", params, {"calls.vcf": vcf_text.encode(), "features.gff3": gff_text.encode()})


STRATEGIES = {"classifier-benchmark": classifier_draw, "tabular-profile": tabular_draw,
              "surrogate-design": surrogate_draw, "pl-power-series": pl_draw, "pump-probe": pump_probe_draw,
              "variant-calling": variant_calling_draw, "variant-annotation": variant_annotation_draw}


def draws(workflow: str):
    return STRATEGIES[workflow]()
