"""The registry actions: `search_workflows`, `describe_workflow` and `validate_params`.

Search ranks the registry's workflows; describe returns one workflow's
parameter table, its outputs with what each declares it holds (type, columns,
keys), and the part of its SKILL.md that helps choose values (any other
section on request); validate asks the full gate and, when
it passes, returns a `Proposal` the controller writes as the draft. Nothing
here writes a file or runs anything, and a sensitive value only ever leaves
as "<redacted>".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from snakegate.agent.actions.base import RARE, ActionContext, Args, ForkOrigin, Proposal, Refused, find_workflow
from snakegate.agent.actions.data import portable
from snakegate.agent.redact import PLACEHOLDER, redact_params, sensitive_values
from snakegate.config.shape import shape_errors
from snakegate.contract.dialect import did_you_mean, fill_defaults
from snakegate.gate.prove import gate
from snakegate.models import GateResult
from snakegate.registry.links import columns_text
from snakegate.registry.workflows import Workflow

SKILL_DEFAULT = ("vague", "choos", "values")  # the SKILL.md section describe returns unasked: how to pick values
SKILL_MAX_CHARS = 2400                        # a section longer than this is cut (the model can ask for it whole)


class SearchWorkflowsArgs(Args):
    query: str = Field(description="Words describing the analysis the researcher wants, e.g. 'profile a csv table'. "
                                   "An empty string lists every workflow.")
    limit: int = Field(5, ge=1, le=50, description="How many matches to return, best first (1-50).",
                       json_schema_extra=RARE)


class DescribeWorkflowArgs(Args):
    workflow: str = Field(description="A workflow id exactly as search_workflows returned it, e.g. 'tabular-profile'.")
    section: str = Field("", description="Optional: the title of another SKILL.md section to read in full "
                                         "(one of skill_sections, e.g. 'Gate errors and what to do').",
                         json_schema_extra=RARE)


class ValidateParamsArgs(Args):
    workflow: str = Field(description="The workflow id, e.g. 'tabular-profile'.")
    params: dict[str, Any] = Field(description="Parameter name -> value, using only the exact names "
                                               "describe_workflow lists. Leave out a parameter to use its default. "
                                               "Send '<redacted>' for a sensitive value the researcher entered.")


# ---- search ---------------------------------------------------------------------------------------
def search_workflows(ctx: ActionContext, args: SearchWorkflowsArgs):
    hits = ctx.registry.search(args.query, args.limit)
    matches = [{"id": wf.id, "title": wf.manifest.title, "description": wf.manifest.description,
                "tags": list(wf.manifest.tags), "score": score} for wf, score in hits]
    ids = ", ".join(m["id"] for m in matches) or "none"
    return {"matches": matches}, f"searched workflows for '{args.query}': {len(matches)} match(es) ({ids})", None


# ---- describe -------------------------------------------------------------------------------------
_PARAM_KEYS = (("default", "default"), ("enum", "enum"), ("minimum", "minimum"), ("maximum", "maximum"),
               ("x-artifact", "artifact"), ("x-column-of", "column_of"), ("items", "items"),
               ("x-builtins", "builtins"))


def param_table(schema: dict) -> list[dict]:
    """One entry per top-level parameter, in schema order: what a caller needs to fill it."""
    required = set(schema.get("required") or [])
    params = []
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        entry = {"name": name, "type": sub.get("type"), "description": sub.get("description", ""),
                 "required": name in required, "sensitive": sub.get("x-sensitive") is True}
        for key, out in _PARAM_KEYS:
            if key in sub:
                entry[out] = sub[key]
        for key, out in (("additionalProperties", "values"), ("propertyNames", "keys")):
            if isinstance(sub.get(key), dict):  # the shape of an object keyed by, e.g., column names
                entry[out] = {k: v for k, v in sub[key].items() if k != "description"}
        if entry["sensitive"] and "default" in entry:
            entry["default"] = PLACEHOLDER
        params.append(entry)
    return params


def output_entry(name: str, decl) -> dict:
    """One declared output as describe shows it: name, type, description, and what it declares it holds
    (`columns` as declared: a list, or how they follow from the params, worded in `columns_are`; `keys` of
    a JSON file, as JSON pointers; `when` it exists)."""
    entry = {"name": name, "type": decl.type, "description": decl.description}
    if isinstance(decl.columns, list):
        entry["columns"] = list(decl.columns)
    elif decl.columns is not None:
        entry["columns"] = decl.columns.model_dump(exclude_defaults=True)
        entry["columns_are"] = columns_text(decl)
    if decl.keys is not None:
        entry["keys"] = list(decl.keys)
    if decl.when:
        entry["when"] = dict(decl.when)
    return entry


def skill_sections(text: str) -> dict[str, str]:
    """SKILL.md's `## ` sections by title, in order (the text before the first one is left out)."""
    sections: dict[str, str] = {}
    title = None
    for line in text.splitlines():
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            title = m.group(1)
            sections[title] = ""
        elif title is not None:
            sections[title] += line + "\n"
    return {t: body.strip() for t, body in sections.items()}


def _pick_section(sections: dict[str, str], wanted: str, wf_id: str) -> tuple[str | None, str]:
    if not wanted.strip():
        title = next((t for t in sections if any(k in t.lower() for k in SKILL_DEFAULT)), None)
        return title, sections.get(title, "") if title else ""
    low = wanted.strip().lower()
    title = next((t for t in sections if t.lower() == low), None) or \
        next((t for t in sections if low in t.lower() or t.lower().startswith(low)), None)
    if title is None:
        close = did_you_mean(wanted, list(sections))
        raise Refused("unknown_section", f"{wf_id}'s SKILL.md has no section `{wanted}`",
                      (f"did you mean `{close}`? " if close else "") + "sections: " + "; ".join(sections))
    return title, sections[title]


def describe_workflow(ctx: ActionContext, args: DescribeWorkflowArgs):
    wf = find_workflow(ctx, args.workflow)
    skill_path = wf.folder / "SKILL.md"
    sections = skill_sections(skill_path.read_text(encoding="utf-8")) if skill_path.is_file() else {}
    title, body = _pick_section(sections, args.section, wf.id)
    if len(body) > SKILL_MAX_CHARS:
        body = body[:SKILL_MAX_CHARS].rsplit("\n", 1)[0] + "\n…(cut)"
    m = wf.manifest
    if args.section.strip():
        result = {"id": wf.id, "section": title, "skill": body}
        return result, f"read {wf.id}'s SKILL.md section “{title}”", None
    params = param_table(wf.schema)
    outputs = [output_entry(n, o) for n, o in m.outputs.items()]
    result = {"id": wf.id, "version": m.version, "title": m.title, "description": m.description,
              "params": params, "outputs": outputs, "skill": body,
              "skill_sections": [t for t in sections if t != title]}
    return result, f"described {wf.id} {m.version}: {len(params)} parameter(s)", None


# ---- validate -------------------------------------------------------------------------------------
def take_sensitive(ctx: ActionContext, wf: Workflow, params: dict,
                   where: str = "params") -> tuple[dict, list[dict]]:
    """`params` with the real values behind "<redacted>" put back (an error at `where.<param>` for each
    placeholder with no known value), every sensitive value sent in plain remembered for later scrubbing."""
    params = json.loads(json.dumps(params))
    errors = []
    for parts, value in sensitive_values(wf.schema, params).items():
        at = where + "." + ".".join(str(p) for p in parts)
        if value != PLACEHOLDER:
            if not (isinstance(value, dict) and "from" in value):  # a plan's reference holds no secret
                ctx.vault[(wf.id, parts)] = value
            continue
        if (wf.id, parts) in ctx.vault:
            target = params
            for p in parts[:-1]:
                target = target[p]
            target[parts[-1]] = ctx.vault[(wf.id, parts)]
        else:
            errors.append({"path": at, "code": "required",
                           "message": f"`{at}` is sensitive and was sent as `{PLACEHOLDER}`, "
                                      "but the researcher has not entered its value in this conversation",
                           "hint": "ask the researcher to type it in the masked field (never in the chat); "
                                   "it stays on this machine", "choices": None})
    return params, errors


def gate_errors(result: GateResult) -> list[dict]:
    return [{"path": e.path, "code": e.code, "message": e.message, "hint": e.hint, "choices": e.choices}
            for e in result.errors]


def proposal_for(ctx: ActionContext, wf: Workflow, params: dict, result: GateResult,
                 fork: ForkOrigin | None = None) -> tuple[dict, Proposal]:
    """The model's view of a passed gate, and the Proposal behind it (real values)."""
    filled = fill_defaults(wf.schema, params)
    version = result.invocation.version
    config_path = Path(ctx.settings.drafts_dir) / f"{wf.id}-{result.invocation_id[:12]}.yaml"
    proposal = Proposal(workflow=wf.id, version=version, invocation_id=result.invocation_id, params=filled,
                        config_path=config_path, fork=fork)
    shown = {"ok": True, "workflow": wf.id, "version": version, "invocation_id": result.invocation_id,
             "params": redact_params(wf.schema, filled),
             "config_path": portable(config_path.absolute(), ctx.settings.registry_root)}
    return shown, proposal


def validate_params(ctx: ActionContext, args: ValidateParamsArgs):
    wf = find_workflow(ctx, args.workflow)
    # Hostile shapes (deep nesting, huge integers, NaN) before anything copies or prints the params
    hostile = [e.model_dump() for e in shape_errors(args.params, ("params",))]
    if hostile:
        return {"ok": False, "errors": hostile}, f"validate {wf.id}: refused, {hostile[0]['path']} [{hostile[0]['code']}]", \
            None
    params, errors = take_sensitive(ctx, wf, args.params)
    if errors:
        return ({"ok": False, "errors": errors},
                f"validate {wf.id}: refused, {len(errors)} problem(s) ({errors[0]['path']})", None)
    result = gate(ctx.registry, {"workflow": wf.id, "params": params}, ctx.settings, check_dag=True)
    if not result.ok:
        errors = gate_errors(result)
        where = ", ".join(f"{e['path']} [{e['code']}]" for e in errors[:3]) + (" …" if len(errors) > 3 else "")
        return {"ok": False, "errors": errors}, f"validate {wf.id}: refused, {len(errors)} problem(s): {where}", None
    shown, proposal = proposal_for(ctx, wf, params, result)
    return shown, f"validated {wf.id} {proposal.version}: passes the gate (invocation {result.invocation_id[:12]}…)", \
        proposal
