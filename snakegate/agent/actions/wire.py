"""The wire mappings of the platform actions: OpenAI `tools`, and the constrained-JSON step schema.

Each action's pydantic argument model gives the JSON Schema of its
arguments; nothing else describes an action to a model. `openai_tools()` is
the chat-completions `tools=[...]` list; `conversation_tools()` narrows it to
one conversation (workflow ids as an enum and, once a workflow is described,
its parameter names, each value shaped by the contract and the data: the
data files that fit a file param, the chosen table's columns for a column
param; `params_schema`); `step_schema()` turns such a list into the one-object-
per-step schema a server's JSON-schema response format enforces. A later MCP
mapping starts from `tool_definition` too. There is deliberately no execute
tool: running needs an approval only the UI can mint. Pure: no I/O.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from snakegate.agent.actions.platform import ACTIONS, Action
from snakegate.agent.redact import PLACEHOLDER


def _clean(schema: dict, defs: dict | None = None) -> dict:
    """pydantic's schema minus its auto-generated `title`s, which only repeat the names to a model, and with
    each `$ref` to a nested model (a plan's steps) written out in place: a step schema nests every tool's
    arguments, where a `#/$defs/...` reference would no longer resolve."""
    out = copy.deepcopy(schema)
    defs = {**(defs or {}), **out.pop("$defs", {})}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs:
        out = {**_clean(defs[ref[len("#/$defs/"):]], defs), **{k: v for k, v in out.items() if k != "$ref"}}
    out.pop("title", None)
    for key in ("properties",):
        for name, prop in list((out.get(key) or {}).items()):
            if isinstance(prop, dict):
                out[key][name] = _clean(prop, defs)
    if isinstance(out.get("items"), dict):
        out["items"] = _clean(out["items"], defs)
    return out


MAX_STRING = 512   # characters of a string the contract does not bound: a small model under a grammar stops here
MAX_ITEMS = 256    # items of an array the contract does not bound
MAX_SAY = 2000     # characters of what a constrained step says to the researcher


def bounded(schema: dict, strings: int = MAX_STRING, items: int = MAX_ITEMS, *, tighten: bool = False) -> dict:
    """`schema` with every string and array given an upper bound where it has none (`strings` characters,
    `items` items), at any depth: a grammar-constrained model otherwise writes "1000…" until the token limit.
    Bounds the schema already has (the contract's own) are kept, or with `tighten` lowered to these (never
    below the contract's own minimum)."""
    out = copy.deepcopy(schema)
    types = out.get("type") if isinstance(out.get("type"), list) else [out.get("type")]
    for kind, low, high, cap in (("string", "minLength", "maxLength", strings), ("array", "minItems", "maxItems",
                                                                               items)):
        if kind not in types or (kind == "string" and ("enum" in out or "const" in out)):
            continue
        floor = out.get(low) if isinstance(out.get(low), int) else 0
        now = out.get(high) if isinstance(out.get(high), int) else None
        out[high] = now if now is not None and not tighten else max(floor, min(cap, now if now is not None else cap))
    for key in ("properties",):
        for name, sub in list((out.get(key) or {}).items()):
            if isinstance(sub, dict):
                out[key][name] = bounded(sub, strings, items, tighten=tighten)
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = bounded(out[key], strings, items, tighten=tighten)
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [bounded(x, strings, items, tighten=tighten) if isinstance(x, dict) else x for x in out[key]]
    return out


def step_bounds(max_tokens: int | None) -> tuple[int, int, int]:
    """(string characters, array items, say characters) a constrained step may hold when its reply gets
    `max_tokens` tokens: a string at most half the budget at one token per character (digits, a repeated
    word), a list an eighth of it (two tokens and a comma each), what it says about three characters a token
    over half of it; so a whole step ends before the limit however it is filled. No budget: the wide bounds."""
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        return MAX_STRING, MAX_ITEMS, MAX_SAY
    return (max(16, min(MAX_STRING, max_tokens // 2)), max(4, min(MAX_ITEMS, max_tokens // 8)),
            max(80, min(MAX_SAY, max_tokens * 3 // 2)))


def _for_step(schema: dict) -> dict:
    """A tool's arguments as a constrained step may carry them: an action's own optional arguments marked rare
    (`x-rare`, e.g. list_runs' filters) are left out at any depth, so a small model under a grammar cannot fill
    them with something invented (they keep their defaults), and a workflow field with a clear choice
    (`x-likely`) offers only that. A workflow's params are never marked rare: every param the contract
    allows stays reachable (params_schema)."""
    out = copy.deepcopy(schema)
    props = out.get("properties") or {}
    for name in [n for n, p in props.items() if isinstance(p, dict) and p.get("x-rare")]:
        del props[name]
    for name, p in list(props.items()):
        if isinstance(p, dict):
            if p.get("x-likely"):
                p["enum"] = list(p.pop("x-likely"))
            props[name] = _for_step(p) if p.get("properties") else p
    return out


@functools.cache
def _parameters(args: type) -> dict:
    # pydantic builds a model's JSON schema anew on every call (about 2 ms a tool); every MCP tools/list and
    # every chat step asks for all of them, so each is built once per process and handed out as a copy
    return _clean(args.model_json_schema())


def tool_definition(action: Action) -> dict:
    return {"type": "function",
            "function": {"name": action.name, "description": action.description,
                         "parameters": copy.deepcopy(_parameters(action.args))}}


def openai_tools() -> list[dict]:
    """Every platform action as an OpenAI `tools=[...]` entry, in registry order."""
    return [tool_definition(a) for a in ACTIONS.values()]


LIKELY = ("describe_workflow", "validate_params")  # where a constrained step is offered only the clear choice
MAX_FILE_ENUM = 100  # more data files than this: a file param stays a free string (the gate still checks it)
MAX_COLUMN_ENUM = 200  # a table with more columns than this: a column param stays a free string
CONTRACT_BOUNDS = ("type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                   "maxLength", "minItems", "maxItems")


def value_schema(prop: dict, files: list[str], header: list[str] | None = None) -> dict:
    """What a value of one workflow parameter may look like on the wire: its type, allowed values and bounds
    as the contract says; a file parameter one of `files` (the data files that fit it) or its built-ins; a
    column parameter one of `header` (given for a param that names columns: its table's columns, once its
    file is chosen; a list of columns has them as its items, and at most as many items as the header has); a
    sensitive one only the placeholder "<redacted>"."""
    if not isinstance(prop, dict):
        return {}
    if prop.get("x-sensitive") is True:
        return {"enum": [PLACEHOLDER]}
    out = {k: copy.deepcopy(prop[k]) for k in CONTRACT_BOUNDS if k in prop}
    if prop.get("x-artifact") and files and len(files) <= MAX_FILE_ENUM and "enum" not in prop:
        out = {"enum": list(prop.get("x-builtins") or []) + list(files)}
    columns = header if header and len(header) <= MAX_COLUMN_ENUM else None
    types = prop.get("type") if isinstance(prop.get("type"), list) else [prop.get("type")]
    if columns and "string" in types and "enum" not in prop:
        out = {"enum": list(columns)}
    items = prop.get("items")
    if isinstance(items, dict):
        out["items"] = value_schema(items, files, header)
        if columns and "array" in types and out["items"].get("enum") == list(columns):
            # a list of this table's columns never holds more than the table has (not MAX_ITEMS): a small model
            # under a grammar otherwise repeats a column until the bound
            out["maxItems"] = min(out.get("maxItems", len(columns)), len(columns))
    return bounded(out)


def params_schema(schema: dict, files: list[str], mentioned: dict[str, Any] | None = None, *,
                  headers: dict[str, list[str]] | None = None, candidates: dict[str, list[str]] | None = None,
                  prefilled: Any = ()) -> dict:
    """The `params` argument of validate_params for one workflow: its parameter names (nothing else), each
    value shaped by `value_schema`, its required ones required. Every param the contract allows stays
    reachable, in a constrained step too: what a researcher says about an optional param (a column list, a
    seed) must be able to reach the draft. `mentioned` ({param: value} the researcher's own words name, see
    guided/parse.request_values) narrows a contract's allowed values to the one they named. The data shape
    the rest (request_check.request_shape): `candidates` ({file param: the data files that fit its type},
    default every file in `files`), `headers` ({table param: the columns of the file it reads now}) for the
    params naming its columns. A `prefilled` param (the researcher stated it; the controller fills it in
    when the model leaves it out) is not required of the model."""
    props = schema.get("properties") or {}
    mentioned, headers, candidates = mentioned or {}, headers or {}, candidates or {}
    prefilled = set(prefilled)
    required = [n for n in schema.get("required") or [] if n in props and n not in prefilled]
    shaped = {}
    for name, sub in props.items():
        sub = sub if isinstance(sub, dict) else {}
        items = sub.get("items") if isinstance(sub.get("items"), dict) else {}
        table = sub.get("x-column-of") or items.get("x-column-of")  # on a list, the mark is about its items
        shaped[name] = value_schema(sub, candidates.get(name, files), headers.get(table) if table else None)
    for name, value in shaped.items():
        if name in mentioned and isinstance(props[name], dict) and mentioned[name] in (props[name].get("enum") or []):
            value["enum"] = [mentioned[name]]
    return {"type": "object", "additionalProperties": False, "properties": shaped, "required": required}


def conversation_tools(workflow_ids: list[str], described: tuple[str, dict] | None = None,
                       done: set[str] = frozenset(), files: list[str] | None = None,
                       likely: str | list[str] | None = None, runs: list[str] | None = None) -> list[dict]:
    """`openai_tools()` narrowed to this conversation: workflow ids are an enum; once a workflow is described
    (`(id, params_schema(...))`), validate_params' params take its shape; workflows already described in
    this turn (`done`) cannot be described again; inspect_data's path is one of the data roots' `files` (or
    empty, to list them). Servers that constrain replies (and the step schema) then cannot produce an unknown
    id, an invented parameter, a path outside the data roots or a repeated description. `likely` (the
    registry search's clear choice for the request, or the few it ranks close to the best) are all a constrained
    step may choose from (`x-likely`). `runs` (the run ids there are; None: not known) makes a run id one of
    them or 'latest', and with no runs at all leaves the run actions out of a constrained step."""
    tools = []
    for action in ACTIONS.values():
        tool = tool_definition(action)
        params = tool["function"]["parameters"]
        props = params.get("properties") or {}
        for field in action.workflow_fields:
            if field in props and workflow_ids:
                optional = field not in (params.get("required") or [])
                ids = [i for i in workflow_ids if not (action.name == "describe_workflow" and i in done)]
                if not ids:
                    break
                props[field]["enum"] = ([""] if optional else []) + ids
                chosen = [i for i in ([likely] if isinstance(likely, str) else likely or []) if i in ids]
                if chosen and not optional and action.name in LIKELY:
                    props[field]["x-likely"] = chosen
        else:  # (no break: the action still has something to offer)
            if runs is not None and _run_fields(params):
                if not runs:  # nothing to ask about: a constrained step is not offered it (step_schema)
                    params["x-no-runs"] = True
                elif len(runs) <= MAX_FILE_ENUM:  # an id that exists, never one a small model makes up
                    for name in _run_fields(params):
                        props[name]["enum"] = ["latest"] + list(runs)
            if action.name == "inspect_data" and files and len(files) <= MAX_FILE_ENUM:
                props["path"]["enum"] = [""] + list(files)
            if action.name == "validate_params" and described is not None:
                wf_id, shape = described
                props["workflow"]["enum"] = [wf_id] + [i for i in workflow_ids if i != wf_id]
                props["params"].update(shape)
            step = (props.get("steps") or {}).get("items") or {}
            if "workflow" in (step.get("properties") or {}) and workflow_ids:  # each step of a proposed plan
                step["properties"]["workflow"]["enum"] = list(workflow_ids)
            tools.append(tool)
    return tools


RUN_FIELDS = ("run_id", "a", "b")   # the arguments that name an earlier run (compare_runs: a and b)


def _run_fields(params: dict) -> list[str]:
    """The required arguments of an action that name an earlier run."""
    props = params.get("properties") or {}
    return [n for n in params.get("required") or [] if n in RUN_FIELDS and isinstance(props.get(n), dict)
            and "string" in [props[n].get("type")]]


def step_schema(tools: list[dict], max_tokens: int | None = None) -> dict:
    """One JSON object per model step: `{"action": <name>, "arguments": {...}}` for each tool, or `{"say": text}`;
    every string and list bounded so the step fits in a reply of `max_tokens` (step_bounds): a reply cut at the
    limit is half a step, lost."""
    strings, items, say = step_bounds(max_tokens)
    options = []
    for tool in tools:
        fn = tool["function"]
        if (fn.get("parameters") or {}).get("x-no-runs"):
            continue
        params = bounded(_for_step(fn.get("parameters") or {"type": "object"}), strings, items, tighten=True)
        options.append({"type": "object", "additionalProperties": False, "required": ["action", "arguments"],
                        "properties": {"action": {"const": fn["name"]}, "arguments": params}})
    options.append({"type": "object", "additionalProperties": False, "required": ["say"],
                    "properties": {"say": {"type": "string", "maxLength": say}}})
    return {"oneOf": options}
