"""The platform actions: the only things a model (LLM or guided dialogue) can make snakegate do.

Owns the registry `ACTIONS` (name -> pydantic argument model + function) and
`call_action()`, which validates the arguments, runs the action and shapes a
JSON-able result with `x-sensitive` values redacted. Every action only reads:
search the registry, describe a workflow, look at a data file's header, ask
the gate. None writes a file or runs anything; `validate_params` returns a
`Proposal` that the controller writes as the draft. `call_action()` never
raises: bad arguments, an unknown action or a crash inside an action become an
`{"error": {...}}` result (fail closed: never an ok).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from snakegate import artifacts
from snakegate.agent.redact import PLACEHOLDER, redact_params, scrub, secret_strings, sensitive_values
from snakegate.contract import did_you_mean, fill_defaults
from snakegate.errors import UserError
from snakegate.gate import gate
from snakegate.metaschemas import artifact_types
from snakegate.registry import Registry, Workflow
from snakegate.settings import Settings

INVALID_JSON = "__invalid_json__"   # ToolCall.arguments key a backend uses when the model sent broken JSON
MAX_ENTRIES = 200                   # folder listings are capped: a model needs names, not a full inventory
MAX_COUNT_BYTES = 64 * 1024 * 1024  # row counting reads at most this much; bigger tables report rows: null


# ---- context and results -------------------------------------------------------------------------
@dataclass
class ActionContext:
    """What actions read: the registry and settings, plus the sensitive values this conversation holds.

    `vault` keeps the real value of every sensitive param the model was given only as "<redacted>",
    so when the model sends "<redacted>" back to validate_params the researcher's value is used."""

    registry: Registry
    settings: Settings
    vault: dict[tuple[str, tuple], Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Proposal:
    """A validate_params that passed the gate: what the controller writes as the draft run config."""

    workflow: str
    version: str
    invocation_id: str
    params: dict[str, Any]   # as given, defaults filled, real (unredacted) values
    config_path: Path        # absolute; drafts_dir / f"{workflow}-{invocation_id[:12]}.yaml"


@dataclass(frozen=True)
class Outcome:
    """One action call, shaped for the model (`result`) and for the researcher (`summary`)."""

    name: str
    arguments: dict[str, Any]     # sensitive values redacted
    result: dict[str, Any]        # JSON-able; sensitive values redacted; what the model receives
    ok: bool
    summary: str
    proposal: Proposal | None = None


class Refused(Exception):
    """Misuse an action reports to the model: `{"error": {code, message, hint}}`."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


def error_result(code: str, message: str, hint: str | None = None) -> dict:
    return {"error": {"code": code, "message": message, "hint": hint}}


# ---- argument models -----------------------------------------------------------------------------
class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchWorkflowsArgs(_Args):
    query: str = Field(description="Words describing the analysis the researcher wants, e.g. 'profile a csv table'. "
                                   "An empty string lists every workflow.")
    limit: int = Field(5, ge=1, le=50, description="How many matches to return, best first (1-50).")


class DescribeWorkflowArgs(_Args):
    workflow: str = Field(description="A workflow id exactly as search_workflows returned it, e.g. 'tabular-profile'.")


class InspectDataArgs(_Args):
    path: str = Field("", description="A file or folder inside the data roots, relative to the registry root "
                                      "(e.g. 'data/examples/tabular-penguins.csv'). Empty lists the data roots' files.")


class ValidateParamsArgs(_Args):
    workflow: str = Field(description="The workflow id, e.g. 'tabular-profile'.")
    params: dict[str, Any] = Field(description="Parameter name -> value, using only the exact names "
                                               "describe_workflow lists. Leave out a parameter to use its default. "
                                               "Send '<redacted>' back unchanged to keep a sensitive value.")


@dataclass(frozen=True)
class Action:
    name: str
    description: str
    args: type[_Args]
    run: Callable[[ActionContext, Any], tuple[dict, str, Proposal | None]]  # -> (result, summary, proposal)


# ---- the actions ---------------------------------------------------------------------------------
def _workflow(ctx: ActionContext, wf_id: str) -> Workflow:
    wf = ctx.registry.get(wf_id)
    if wf is not None:
        return wf
    ids = ctx.registry.ids()
    if wf_id in ctx.registry.broken:
        raise Refused("unknown_workflow", f"workflow `{wf_id}` cannot be loaded: {ctx.registry.broken[wf_id]}",
                      "choose another workflow; this one needs fixing by its maintainer")
    close = did_you_mean(wf_id, ids)
    raise Refused("unknown_workflow", f"there is no workflow `{wf_id}` in the registry",
                  f"did you mean `{close}`?" if close else
                  f"use an id from search_workflows (available: {', '.join(ids) or 'none'})")


def search_workflows(ctx: ActionContext, args: SearchWorkflowsArgs):
    hits = ctx.registry.search(args.query, args.limit)
    matches = [{"id": wf.id, "title": wf.manifest.title, "description": wf.manifest.description,
                "tags": list(wf.manifest.tags), "score": score} for wf, score in hits]
    ids = ", ".join(m["id"] for m in matches) or "none"
    return {"matches": matches}, f"searched workflows for '{args.query}': {len(matches)} match(es) ({ids})", None


_PARAM_KEYS = (("default", "default"), ("enum", "enum"), ("minimum", "minimum"), ("maximum", "maximum"),
               ("x-artifact", "artifact"), ("x-column-of", "column_of"), ("items", "items"))


def describe_workflow(ctx: ActionContext, args: DescribeWorkflowArgs):
    wf = _workflow(ctx, args.workflow)
    schema = wf.schema
    required = set(schema.get("required") or [])
    params = []
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        entry = {"name": name, "type": sub.get("type"), "description": sub.get("description", ""),
                 "required": name in required, "sensitive": sub.get("x-sensitive") is True}
        for key, out in _PARAM_KEYS:
            if key in sub:
                entry[out] = sub[key]
        if entry["sensitive"] and "default" in entry:
            entry["default"] = PLACEHOLDER
        params.append(entry)
    skill_path = wf.folder / "SKILL.md"
    skill = skill_path.read_text(encoding="utf-8") if skill_path.is_file() else ""
    m = wf.manifest
    outputs = [{"name": n, "type": o.type, "description": o.description} for n, o in m.outputs.items()]
    result = {"id": wf.id, "version": m.version, "title": m.title, "description": m.description,
              "skill": skill, "outputs": outputs, "params": params}
    return result, f"described {wf.id} {m.version}: {len(params)} parameter(s)", None


def _portable(path: Path, root: Path) -> str:
    """Registry-relative when inside the registry (the form a run config uses), else absolute."""
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _artifact_type(path: Path) -> str | None:
    """The artifact type `path` parses as: types claiming its extension first, then by content.

    Content-only guesses skip the checks that prove nothing alone ("none", and yaml's plain text
    check), and a table must have more than one column (any text line is a one-column table)."""
    types = artifact_types()
    suffix = path.suffix.lower()
    by_ext = [t for t, spec in types.items() if suffix in spec.get("extensions", [])]
    order = {"magic": 0, "prefix": 1, "json": 2, "table": 3, "text": 4}
    by_content = sorted((t for t, spec in types.items() if t not in by_ext and spec.get("check") in order
                         and t != "yaml"), key=lambda t: order[types[t]["check"]])
    for t in by_ext:
        if artifacts.check(path, t) is None:
            return t
    for t in by_content:
        if artifacts.check(path, t) is not None:
            continue
        if artifacts.is_table(t) and len(artifacts.table_header(path, artifacts.delimiter(t)) or []) < 2:
            continue
        return t
    return None


def _count_rows(path: Path) -> int | None:
    """Data lines after the header, or None when the file is bigger than the counting cap."""
    if path.stat().st_size > MAX_COUNT_BYTES:
        return None
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if last != b"\n":
        lines += 1  # the last line has no newline
    return max(lines - 1, 0)


def _entries(folder: Path, roots: list[Path], root: Path, recursive: bool) -> list[dict]:
    found = []
    walker = folder.rglob("*") if recursive else folder.iterdir()
    for p in walker:
        try:
            real = p.resolve()
        except (OSError, RuntimeError):
            continue
        if not _inside(real, roots) or p.name.startswith("."):
            continue  # a symlink leading out of the data roots is not shown, nor hidden files
        if recursive and not real.is_file():
            continue
        found.append({"path": _portable(p.absolute(), root), "kind": "folder" if real.is_dir() else "file"})
    return sorted(found, key=lambda e: e["path"])[:MAX_ENTRIES]


def inspect_data(ctx: ActionContext, args: InspectDataArgs):
    root = ctx.settings.registry_root
    roots = [r.resolve() for r in ctx.settings.data_roots]
    roots_text = ", ".join(_portable(r, root) for r in roots) or "(none configured)"
    if not args.path.strip():
        entries = []
        for r in roots:
            if r.is_dir():
                entries.extend(_entries(r, roots, root, recursive=True))
        entries = sorted({e["path"]: e for e in entries}.values(), key=lambda e: e["path"])[:MAX_ENTRIES]
        return ({"kind": "folder", "path": "", "entries": entries},
                f"listed the data roots ({roots_text}): {len(entries)} file(s)", None)
    try:
        raw = Path(args.path).expanduser()
        resolved = (raw if raw.is_absolute() else root / raw).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise Refused("not_found", f"`path` = `{args.path}` cannot be resolved ({exc})",
                      "give a path inside the data roots, e.g. one listed by inspect_data with an empty path")
    if not _inside(resolved, roots):
        raise Refused("path_outside_roots",
                      f"`path` = `{args.path}` resolves to {resolved}, outside the allowed data roots ({roots_text})",
                      "only files inside the data roots can be used; ask the researcher to copy the file into "
                      "one, or call inspect_data with an empty path to list what is there")
    shown = _portable(resolved, root)
    if resolved.is_dir():
        entries = _entries(resolved, roots, root, recursive=False)
        return ({"kind": "folder", "path": shown, "entries": entries},
                f"listed {shown}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}", None)
    if not resolved.is_file():
        raise Refused("not_found", f"`path` = `{args.path}`: {resolved} does not exist",
                      "check the spelling; call inspect_data with an empty path to list the data roots' files")
    type_name = _artifact_type(resolved)
    columns = rows = None
    if type_name and artifacts.is_table(type_name):
        columns = artifacts.table_header(resolved, artifacts.delimiter(type_name))
        rows = _count_rows(resolved)
    detail = f", {len(columns)} columns, {rows if rows is not None else 'many'} rows" if columns else ""
    return ({"kind": "file", "path": shown, "type": type_name, "columns": columns, "rows": rows},
            f"inspected {shown}: {type_name or 'unknown type'}{detail}", None)


def _restore_placeholders(ctx: ActionContext, wf: Workflow, params: dict) -> tuple[dict, list[dict]]:
    """Put back the real values behind "<redacted>"; an error for each placeholder with no known value."""
    params = json.loads(json.dumps(params))
    errors = []
    for parts, value in sensitive_values(wf.schema, params).items():
        if value != PLACEHOLDER:
            continue
        where = "params." + ".".join(str(p) for p in parts)
        if (wf.id, parts) in ctx.vault:
            target = params
            for p in parts[:-1]:
                target = target[p]
            target[parts[-1]] = ctx.vault[(wf.id, parts)]
        else:
            errors.append({"path": where, "code": "required",
                           "message": f"`{where}` is sensitive and was sent as `{PLACEHOLDER}`, "
                                      "but the researcher has not given its value in this conversation",
                           "hint": "ask the researcher for the value; it stays on this machine", "choices": None})
    return params, errors


def validate_params(ctx: ActionContext, args: ValidateParamsArgs):
    wf = _workflow(ctx, args.workflow)
    params, errors = _restore_placeholders(ctx, wf, args.params)
    for parts, value in sensitive_values(wf.schema, params).items():
        if value != PLACEHOLDER:
            ctx.vault[(wf.id, parts)] = value
    if errors:
        return ({"ok": False, "errors": errors},
                f"validate {wf.id}: refused, {len(errors)} problem(s) ({errors[0]['path']})", None)
    result = gate(ctx.registry, {"workflow": wf.id, "params": params}, ctx.settings, check_dag=True)
    if not result.ok:
        errors = [{"path": e.path, "code": e.code, "message": e.message, "hint": e.hint, "choices": e.choices}
                  for e in result.errors]
        where = ", ".join(f"{e['path']} [{e['code']}]" for e in errors[:3]) + (" …" if len(errors) > 3 else "")
        return {"ok": False, "errors": errors}, f"validate {wf.id}: refused, {len(errors)} problem(s): {where}", None
    filled = fill_defaults(wf.schema, params)
    version = result.invocation.version
    config_path = Path(ctx.settings.drafts_dir) / f"{wf.id}-{result.invocation_id[:12]}.yaml"
    proposal = Proposal(workflow=wf.id, version=version, invocation_id=result.invocation_id, params=filled,
                        config_path=config_path)
    shown = {"ok": True, "workflow": wf.id, "version": version, "invocation_id": result.invocation_id,
             "params": redact_params(wf.schema, filled),
             "config_path": _portable(config_path.absolute(), ctx.settings.registry_root)}
    return shown, f"validated {wf.id} {version}: passes the gate (invocation {result.invocation_id[:12]}…)", proposal


ACTIONS: dict[str, Action] = {a.name: a for a in (
    Action("search_workflows",
           "Find registry workflows matching the researcher's goal. Returns id, title, description, tags, score.",
           SearchWorkflowsArgs, search_workflows),
    Action("describe_workflow",
           "Everything needed to fill a workflow's parameters: exact parameter names, types, defaults, allowed "
           "values, which are input files (artifact) or column names (column_of), its outputs, and its SKILL.md "
           "(how to choose values and handle gate errors). Call it before validate_params.",
           DescribeWorkflowArgs, describe_workflow),
    Action("inspect_data",
           "Look at the researcher's data without reading cell values: list the data roots (empty path) or a "
           "folder, or report a file's artifact type, column names and row count.",
           InspectDataArgs, inspect_data),
    Action("validate_params",
           "Check a complete parameter set with the gate (schema, files, columns, Snakemake DAG). ok: a draft run "
           "config is written for the researcher to approve in the panel. Refused: errors with path, code, "
           "message, hint and choices to resolve with the researcher. This never runs the workflow.",
           ValidateParamsArgs, validate_params),
)}


# ---- dispatch ------------------------------------------------------------------------------------
def _field_list(model: type[_Args]) -> str:
    parts = []
    for name, f in model.model_fields.items():
        kind = getattr(f.annotation, "__name__", None) or str(f.annotation)
        parts.append(f"`{name}` ({kind}, {'required' if f.is_required() else f'default {f.default!r}'})")
    return ", ".join(parts)


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _bad_arguments(action: Action, exc: ValidationError) -> dict:
    problems, hints = [], []
    fields = list(action.args.model_fields)
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            problems.append(f"`{where}` is required")
        elif err["type"] == "extra_forbidden":
            problems.append(f"`{where}` is not an argument of {action.name}")
            close = difflib.get_close_matches(where, fields, n=1)
            if close:
                hints.append(f"did you mean `{close[0]}`?")
        else:
            problems.append(f"`{where}` {err['msg'][0].lower() + err['msg'][1:]} (got {_short(err.get('input'))})")
    hints.append(f"{action.name} takes {_field_list(action.args)}")
    return error_result("bad_arguments", f"bad arguments for {action.name}: " + "; ".join(problems), "; ".join(hints))


def _redacted_arguments(ctx: ActionContext, name: str, arguments: dict) -> dict:
    if name != "validate_params" or not isinstance(arguments.get("params"), dict):
        return dict(arguments)
    wf = ctx.registry.get(arguments.get("workflow")) if isinstance(arguments.get("workflow"), str) else None
    if wf is None:
        return dict(arguments)
    try:
        return {**arguments, "params": redact_params(wf.schema, arguments["params"])}
    except Exception:  # a broken schema: show nothing rather than a value that may be secret
        return {**arguments, "params": PLACEHOLDER}


def call_action(ctx: ActionContext, name: str, arguments: dict | None) -> Outcome:
    """Validate the arguments, run the action, shape the result. Never raises."""
    arguments = arguments if isinstance(arguments, dict) else {}
    action = ACTIONS.get(name)
    if action is None:
        close = did_you_mean(name, ACTIONS)
        result = error_result("unknown_action", f"there is no action `{name}`",
                              (f"did you mean `{close}`? " if close else "")
                              + f"the actions are: {', '.join(ACTIONS)}; running a workflow is not one of them "
                                "(the researcher approves the draft in the panel)")
        return Outcome(name, dict(arguments), result, False, f"{name}: unknown action")
    shown_args = _redacted_arguments(ctx, name, arguments)
    proposal, summary = None, ""
    if INVALID_JSON in arguments:
        result = error_result("bad_arguments",
                              f"the arguments of {name} are not valid JSON: {_short(arguments[INVALID_JSON], 120)}",
                              f"send one JSON object; {name} takes {_field_list(action.args)}")
        shown_args = {}
    else:
        try:
            args = action.args.model_validate(arguments)
        except ValidationError as exc:
            result = _bad_arguments(action, exc)
        else:
            try:
                result, summary, proposal = action.run(ctx, args)
            except Refused as exc:
                result = error_result(exc.code, exc.message, exc.hint)
            except UserError as exc:
                result = error_result("action_failed", f"{name} could not finish: {exc.message}",
                                      "tell the researcher; this is not something new arguments fix")
            except Exception as exc:  # fail closed: a crash is an error result, never an ok
                result = error_result("internal_error", f"{name} failed inside snakegate: "
                                      f"{type(exc).__name__}: {exc}",
                                      "tell the researcher; report it to the snakegate maintainers")
    # Gate sentences quote values (`got s3cret`): scrub every sensitive value this conversation holds.
    secrets = secret_strings(ctx.vault.values())
    result = scrub(result, secrets)
    error = result.get("error")
    ok = error is None and result.get("ok", True) is True
    if error is not None:
        summary = f"{name}: {error['code']} — {error['message']}"
    if not ok:
        proposal = None
    return Outcome(name, scrub(shown_args, secrets), result, ok, scrub(summary, secrets), proposal)


def result_json(result: dict) -> str:
    """The `role: tool` message content: the result as sorted JSON."""
    return json.dumps(result, sort_keys=True, default=str)


