"""`snakegate report`: one self-contained HTML page for a run, like a lab notebook's page.

`build()` gathers what the run folder says (snakegate.views.facts: status and times, its verdict — each check's
measured value against its threshold, for a failing one what it means and the params to look at —, who
proposed and approved it, the SHAs that pin it, the refinement it belongs to, params with sensitive values
masked, every declared output with its sha256 and a preview — PNG/SVG inline, key numbers of JSON, the first
rows of tables —, the job timeline from the PROV record, and for a failure the rule, the real error and the
log's tail) into plain data; `render()` fills templates/report.html.j2 through Jinja2 with autoescaping, so
every recorded text is escaped. The page loads nothing: images are data URIs and a Content-Security-Policy
forbids any other source. No wall-clock time is written into the page: the same run gives the same bytes.
`write()` never replaces a file that is not a report of the same run unless asked to.

A plan's run (snakegate.views.plan) is one page for the plan: its label, its invocation id and the edges
between its steps, then a section per step with that step's params (by its own contract), its outputs and its
jobs in the timeline (offsets from the plan's first job); the pins name no single workflow's hash (each step's
is in its section).

A record that does not prove itself (snakegate.views.proof, as `snakegate verify` checks it) is said at the top
of the page, naming what failed.

The page keeps to a budget whatever the run wrote: an image is embedded only up to IMAGE_BYTES, and all
images together up to IMAGES_BYTES; at most PREVIEWS outputs get a preview; a text output is read only
for its first TEXT_PREVIEW_BYTES (tables and JSON are bounded in views.facts). What is left out is listed
with its path, size and sha256, and the page says why. A parent run is linked only when its recorded id is
a run id (`runstore.is_safe_run_id`): never `../../etc` or `javascript:`.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from snakegate.views import facts
from snakegate.views import params as param_view
from snakegate.views.proof import record_check, warning
from snakegate.views import assessments
from snakegate.views.verdict import report_rows as verdict_rows
from snakegate.views.plan import own_name, read as read_plan, step_of_rule, with_arrows
from snakegate.provenance import compare, runstore

REPORT_NAME = "report.html"
IMAGE_BYTES = 2 * 1024 * 1024   # an image bigger than this is listed (path, size, sha256), not embedded
IMAGES_BYTES = 8 * 1024 * 1024  # all embedded images of one page together; later images are listed instead
PREVIEWS = 40                   # outputs previewed on one page; later ones are listed with path, size and sha256
TEXT_PREVIEW_BYTES = 64 * 1024  # a text output is read this far, for its first lines
TEXT_HEAD_LINES = 8
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif"}
TABLE_SUFFIXES = (".csv", ".tsv", ".tab")
TEXT_SUFFIXES = (".txt", ".log", ".md", ".yaml", ".yml", ".vcf", ".bed")
MARK = "snakegate-report"  # <meta name=MARK content=run_id>: how write() knows a page is ours
_MARK_RE = re.compile(rb'<meta name="snakegate-report" content="([^"]*)">')
STATUS_WORD = {"succeeded": "succeeded", "failed": "failed", "cancelled": "cancelled", "running": "running",
               "interrupted": "interrupted", "incomplete": "incomplete"}


class ReportError(Exception):
    """The report cannot be written as asked; the message names the file and the fix."""


# ---- gathering -----------------------------------------------------------------------------------
def build(registry, settings, run_dir: Path, dest: Path | None = None) -> dict:
    """Everything the page shows, as plain data. `dest` (where the page will be written) makes the link to
    a parent run's report relative to it. Raises facts.UnreadableRun for a run.json that cannot be read."""
    run_dir = Path(run_dir)
    registry_root = settings.registry_root
    record, note = facts.current_record(settings, run_dir)
    plan = read_plan(run_dir, registry, record)
    wf = facts.workflow_of(registry, run_dir) if plan is None else None
    schema = plan.scope()[0] if plan is not None else wf.schema if wf is not None else None
    scrub = param_view.Scrubber(run_dir, schema, plan)
    invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
    try:
        prov, prov_note = compare.load_prov(run_dir), None
    except compare.ProvMissing as exc:
        prov, prov_note = {}, str(exc)
    status = str(record.get("status") or "unknown")
    origin = facts.origin_of(record, run_dir, prov)
    descriptions = {n: o.description for n, o in wf.manifest.outputs.items()} if wf is not None else \
        {f"{s.name}.{n}": d for s in plan.steps for n, d in s.outputs.items()} if plan is not None else {}
    data: dict[str, Any] = {
        "run_id": record["run_id"], "status": status, "note": note,
        "workflow": record.get("workflow") or invocation.get("workflow") or "unknown",
        "version": record.get("version") or invocation.get("version") or "",
        "title": wf.manifest.title if wf is not None else plan.title if plan is not None else None,
        "description": wf.manifest.description if wf is not None else None,
        "times": _times(record),
        "origin": origin,
        "pins": _pins(record, invocation, prov, plan),
        "prov_note": prov_note,
        "parent": _parent(record, run_dir, schema, dest),
        "params": _params(schema, invocation.get("params") or {}) if plan is None else [],
        **_outputs(record, run_dir, wf, prov, scrub, descriptions),
        "problem": scrub(_problem(record, run_dir, registry_root, status)),
        "timeline": _timeline(prov, scrub),
        "diagnostics": scrub(facts.diagnostics(run_dir)),
        "folder": facts.relative_to(run_dir, registry_root),
    }
    data["plan"] = _plan(plan, data["outputs"], data["timeline"], record) if plan is not None else None
    data["verdict"] = verdict_rows(record)
    data["assessments"] = scrub(assessments.of_run(registry_root, str(record["run_id"])))
    data["refinement"] = facts.refinement_of(record)
    data["proof"] = warning(record_check(run_dir, registry_root), record["run_id"]) if status != "running" else None
    return data


def _plan(plan, outputs: list[dict], timeline: dict, record: dict) -> dict:
    """A plan's run on its page: the plan (label, invocation id, edges) and a section per step with its
    params, its outputs (already previewed within the page's one budget) and its jobs in the timeline; what
    no step claims is listed after them."""
    steps, claimed_outputs, claimed_jobs = [], set(), set()
    for step in plan.steps:
        mine = [dict(o, short=own_name(o["name"], step.name)) for o in outputs if o.get("step") == step.name]
        jobs = [dict(j, short=own_name(j["rule"], step.name)) for j in timeline["jobs"] if j.get("step") == step.name]
        claimed_outputs.update(o["name"] for o in mine)
        claimed_jobs.update(id(j) for j in timeline["jobs"] if j.get("step") == step.name)
        steps.append({"name": step.name, "workflow": step.workflow or "unknown", "version": step.version or "",
                      "title": step.title, "description": step.description, "content_hash": step.workflow_hash,
                      "takes": [e.text for e in step.takes],
                      "feeds": [e.text for e in plan.edges if e.source == step.name],
                      "params": _params(step.schema, step.params, arrows=True), "outputs": mine, "jobs": jobs,
                      "reused": sum(1 for r in record.get("reused") or []
                                    if isinstance(r, dict) and step_of_rule(r.get("rule")) == step.name)})
    return {"label": plan.label, "invocation_id": plan.invocation_id, "edges": [e.text for e in plan.edges],
            "steps": steps, "other_outputs": [o for o in outputs if o["name"] not in claimed_outputs],
            "other_jobs": [j for j in timeline["jobs"] if id(j) not in claimed_jobs]}


def _times(record: dict) -> list[tuple[str, str]]:
    duration = record.get("duration_s", runstore.duration_s(record))
    rows = [("started", record.get("started")), ("ended", record.get("ended")),
            ("duration", facts.duration_text(duration) if duration is not None else None),
            ("stage", record.get("stage")),
            ("exit code", record.get("exit_code")),
            ("jobs run", ", ".join(record.get("jobs_executed") or []) or None),
            ("stale run found at", record.get("interrupted_detected_at"))]
    return [(k, str(v)) for k, v in rows if v not in (None, "")]


def _pins(record: dict, invocation: dict, prov: dict, plan=None) -> list[tuple[str, str]]:
    """What pins the run. A plan's: its invocation id and the registry commit; each step's workflow content
    hash is in its own section (one `workflow content hash` for the page would be one step's)."""
    from snakegate.provenance.rocrate.from_prov import engine_version

    if plan is not None:
        rows = [("plan invocation id", plan.invocation_id or record.get("invocation_id"))]
        rows += [(label, sha) for label, sha in facts.pins(prov) if label == "registry commit"]
    else:
        rows = [("invocation id", record.get("invocation_id") or invocation.get("invocation_id"))]
        rows += facts.pins(prov)
    dirty = facts.registry_dirty(prov)
    if dirty:
        rows.append(("registry state", "uncommitted changes when the run was recorded"))
    if engine_version(prov):
        rows.append(("Snakemake", engine_version(prov)))
    return [(k, str(v)) for k, v in rows if v]


def _parent(record: dict, run_dir: Path, schema: dict | None, dest: Path | None) -> dict | None:
    parent = facts.parent_of(record, schema)
    if parent is None:
        return None
    if not (isinstance(parent["run_id"], str) and runstore.is_safe_run_id(parent["run_id"])):
        parent["run_id"] = str(parent["run_id"])
        parent["href"], parent["has_report"] = None, False  # shown as recorded, never a link
        return parent
    report = run_dir.parent / parent["run_id"] / REPORT_NAME
    base = Path(dest).parent if dest is not None else run_dir
    parent["href"] = Path(os.path.relpath(report, base)).as_posix()
    parent["has_report"] = report.is_file()
    return parent


def _params(schema: dict | None, params: dict, arrows: bool = False) -> list[dict]:
    """The params table's rows, sensitive values masked; with `arrows` (a plan's step) an input taken from
    another step reads `← clean.cleaned`."""
    shown = param_view.masked_params(schema, params)
    props = (schema or {}).get("properties") or {}
    rows = []
    for name, value in shown.items():
        sub = props.get(name) or {}
        rows.append({"name": name, "value": param_view.value_text(with_arrows(value) if arrows else value),
                     "masked": value == param_view.MASK,
                     "default": "default" in sub and sub.get("default") == params.get(name),
                     "description": sub.get("description") or ""})
    return rows


def _sha256(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def _recorded(prov: dict) -> dict[str, str]:
    """Declared output name -> the sha256 the PROV record holds for it."""
    out = {}
    for attrs in (prov.get("entity") or {}).values():
        name = compare.plain(attrs.get("sg:declaredOutput")) if isinstance(attrs, dict) else None
        if name and compare.sha256_of(attrs):
            out.setdefault(str(name), str(compare.sha256_of(attrs)))
    return out


def _declared(record: dict, wf, descriptions: dict) -> list[dict]:
    """{name, path (run-relative), type, description} of every declared output: run.json's list (paths
    already expanded; a plan's name its step), else the manifest's."""
    listed = [o for o in record.get("outputs") or [] if isinstance(o, dict) and o.get("path")]
    if listed:
        run_id = record.get("run_id")
        return [{"name": o.get("name"), "type": o.get("type"), "description": descriptions.get(o.get("name")),
                 "path": str(o["path"]).split(f"{run_id}/", 1)[-1],
                 **({"step": o["step"]} if isinstance(o.get("step"), str) else {})} for o in listed]
    if wf is None:
        return []
    return [{"name": n, "type": o.type, "description": o.description, "path": o.path}
            for n, o in wf.manifest.outputs.items()]


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


class _Budget:
    """What is left of the page's budget as outputs are previewed, and what was left out (and why)."""

    def __init__(self):
        self.images = IMAGES_BYTES
        self.previews = PREVIEWS
        self.left_out: list[dict] = []

    def leave_out(self, row: dict, why: str) -> dict:
        self.left_out.append({"name": row["name"], "path": row["path"], "size": row["size"], "sha256": row["sha256"],
                              "why": why})
        return {"kind": "note", "text": f"not shown on this page: {why}; open {row['path']} ({row['size']:,} bytes, "
                                        f"sha256 {row['sha256']})"}


def _outputs(record: dict, run_dir: Path, wf, prov: dict, scrub, descriptions: dict) -> dict:
    """{outputs, left_out}: every declared output with its sha256 (now, and as the PROV record holds it) and a
    preview within the page's budget; a sensitive value the workflow wrote into a table or text is masked in the
    preview too. `left_out` lists what the budget kept off the page."""
    recorded = _recorded(prov)
    budget = _Budget()
    rows = []
    for out in _declared(record, wf, descriptions):
        path = run_dir / out["path"]
        real = path.resolve()
        inside = run_dir.resolve() in real.parents  # never embed a file a symlink points outside the run to
        exists = path.is_file() and inside
        digest = _sha256(path) if exists else None
        row = dict(out, exists=exists, sha256=digest, size=path.stat().st_size if exists else None,
                   recorded=recorded.get(out["name"]))
        row["matches_record"] = None if not (digest and row["recorded"]) else digest == row["recorded"]
        if exists:
            preview = _preview(path, out.get("type"), row, budget)
            row["preview"] = preview if not preview or preview["kind"] == "image" else scrub(preview)
        rows.append(row)
    return {"outputs": rows, "left_out": budget.left_out, "budget": {
        "image": _mib(IMAGE_BYTES), "images": _mib(IMAGES_BYTES), "previews": PREVIEWS,
        "text": f"{TEXT_PREVIEW_BYTES // 1024} KiB"}}


def _preview(path: Path, kind: str | None, row: dict, budget: _Budget) -> dict | None:
    suffix = path.suffix.lower()
    if budget.previews <= 0:
        return budget.leave_out(row, f"the page previews at most {PREVIEWS} outputs")
    budget.previews -= 1
    if suffix in IMAGE_TYPES:
        size = row["size"]
        if size > IMAGE_BYTES:
            return budget.leave_out(row, f"an image over the {_mib(IMAGE_BYTES)} cap per image")
        if size > budget.images:
            return budget.leave_out(row, f"the page's {_mib(IMAGES_BYTES)} for images were used by the images above")
        try:
            data, more = runstore.read_head(path, min(IMAGE_BYTES, budget.images), follow_symlinks=True)
        except (OSError, runstore.RecordUnreadable):
            return None
        if more:  # it grew since it was measured
            return budget.leave_out(row, f"an image over the {_mib(IMAGE_BYTES)} cap per image")
        budget.images -= len(data)
        return {"kind": "image", "src": f"data:{IMAGE_TYPES[suffix]};base64,{base64.b64encode(data).decode('ascii')}"}
    if suffix == ".json":
        if row["size"] > facts.JSON_READ_BYTES:
            return {"kind": "note", "text": f"key numbers not read: the file is over {_mib(facts.JSON_READ_BYTES)}"}
        numbers = facts.json_numbers(path)
        return {"kind": "numbers", "numbers": [(k, _number(v)) for k, v in (numbers or {}).items()]} \
            if numbers else None
    if suffix in TABLE_SUFFIXES or (kind or "").endswith("table"):
        head = facts.table_head(path)
        return {"kind": "table", **head} if head else None
    if suffix in TEXT_SUFFIXES or kind == "text":
        try:
            data, cut = runstore.read_head(path, TEXT_PREVIEW_BYTES, follow_symlinks=True)
        except (OSError, runstore.RecordUnreadable):
            return None
        lines = data.decode("utf-8", errors="replace").splitlines()
        if cut and lines:
            lines = lines[:-1]  # the last line read may be cut short
        return {"kind": "text", "lines": [facts.cut_line(line, 200) for line in lines[:TEXT_HEAD_LINES]],
                "more": max(0, len(lines) - TEXT_HEAD_LINES), "cut": cut}
    return None


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _left_in_queue(record: dict) -> str:
    commands = facts.left_in_queue(record)
    if commands is None:
        return ""
    return (f"; jobs it sent to Slurm may still be queued or running: see them with `{commands[0]}`, "
            f"cancel them with `{commands[1]}`")


def _problem(record: dict, run_dir: Path, root: Path, status: str) -> dict | None:
    """What went wrong or was left undone, by status: the failure facts, the cancel, the missing outputs."""
    out: dict[str, Any] = {}
    if status == "failed":
        out["failure"] = facts.failure_facts(record, run_dir, root)
        if record.get("error_code"):
            out["code"] = record["error_code"]
    if status == "cancelled":
        out["cancelled_by"] = record.get("cancelled_by") or "a signal"
        out["running_jobs"] = record.get("running_jobs")  # None: not recorded (older runs)
    if status == "interrupted":
        out["interrupted"] = ("the process that ran it stopped before the run was recorded"
                              + (f"; found at {record['interrupted_detected_at']}"
                                 if record.get("interrupted_detected_at") else "")
                              + _left_in_queue(record))
    for key in ("missing_outputs", "input_changed"):
        if record.get(key):
            out[key] = record[key]
    if status not in ("succeeded", "running") and record.get("error") and "failure" not in out:
        out["error"] = facts.cut_line(record["error"], 2 * facts.LINE_CHARS)
    return out or None


def _timeline(prov: dict, scrub) -> dict:
    jobs = facts.timeline(prov)
    for job in jobs:
        job["step"] = step_of_rule(job["rule"])
    ends = [j["offset_s"] + (j["duration_s"] or 0) for j in jobs if j["offset_s"] is not None]
    span = max(ends) if ends else 0
    for job in jobs:
        job["error"] = scrub(job.get("error"))
        if span > 0 and job["offset_s"] is not None:
            job["left"] = round(100 * job["offset_s"] / span, 2)
            job["width"] = max(0.6, round(100 * (job["duration_s"] or 0) / span, 2))
        else:
            job["left"], job["width"] = 0, 0.6
        job["duration"] = facts.duration_text(job["duration_s"])
    return {"jobs": jobs, "span": facts.duration_text(span)}


# ---- rendering and writing -----------------------------------------------------------------------
def render(data: dict) -> str:
    import jinja2

    from snakegate import __version__

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             autoescape=True, undefined=jinja2.ChainableUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("report.html.j2").render(r=data, mark=MARK, version=__version__,
                                                     status_word=STATUS_WORD)


def default_path(run_dir: Path) -> Path:
    return Path(run_dir) / REPORT_NAME


def report_of(path: Path) -> str | None:
    """The run id a snakegate report at `path` is about, or None when the file is something else."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    found = _MARK_RE.search(head)
    return found.group(1).decode("utf-8", "replace") if found else None


def write(html: str, dest: Path, run_id: str, force: bool = False) -> Path:
    """Write the page (write-then-rename). An existing file is replaced only when it is an earlier report of
    the same run or `force` is set; a folder never."""
    dest = Path(dest)
    if dest.is_dir():
        raise ReportError(f"{dest} is a folder; give a file name such as {dest / REPORT_NAME}")
    if dest.exists() and not force and report_of(dest) != run_id:
        raise ReportError(f"{dest} already exists and is not a report of run {run_id}; choose another -o path, "
                          "or add --force to replace it (nothing was written)")
    if not dest.parent.is_dir():
        raise ReportError(f"cannot write {dest}: the folder {dest.parent} does not exist")
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, dest)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReportError(f"cannot write {dest}: {exc.strerror or exc}") from None
    return dest
