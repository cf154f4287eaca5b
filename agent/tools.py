"""The wire mappings of the platform actions: OpenAI `tools`, and the constrained-JSON step schema.

Each action's pydantic argument model gives the JSON Schema of its
arguments; nothing else describes an action to a model. `openai_tools()` is
the chat-completions `tools=[...]` list; `conversation_tools()` narrows it to
one conversation (workflow ids as an enum and, once a workflow is described,
its parameter names); `step_schema()` turns such a list into the one-object-
per-step schema a server's JSON-schema response format enforces. A later MCP
mapping starts from `tool_definition` too. There is deliberately no execute
tool: running needs an approval only the UI can mint. Pure: no I/O.
"""

from __future__ import annotations

import copy

from snakegate.agent.actions import ACTIONS, Action


def _clean(schema: dict) -> dict:
    """pydantic's schema minus its auto-generated `title`s, which only repeat the names to a model."""
    out = copy.deepcopy(schema)
    out.pop("title", None)
    for prop in (out.get("properties") or {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return out


def tool_definition(action: Action) -> dict:
    return {"type": "function",
            "function": {"name": action.name, "description": action.description,
                         "parameters": _clean(action.args.model_json_schema())}}


def openai_tools() -> list[dict]:
    """Every platform action as an OpenAI `tools=[...]` entry, in registry order."""
    return [tool_definition(a) for a in ACTIONS.values()]


def conversation_tools(workflow_ids: list[str], described: tuple[str, list[str]] | None = None) -> list[dict]:
    """`openai_tools()` narrowed to this registry: workflow ids are an enum; once a workflow is described
    (`(id, param names)`), validate_params' params may only use its names. Servers that constrain tool
    calls (and the step schema) then cannot produce an unknown id or an invented parameter."""
    tools = []
    for action in ACTIONS.values():
        tool = tool_definition(action)
        props = tool["function"]["parameters"].get("properties") or {}
        for field in action.workflow_fields:
            if field in props and workflow_ids:
                optional = field not in (tool["function"]["parameters"].get("required") or [])
                props[field]["enum"] = ([""] if optional else []) + list(workflow_ids)
        if action.name == "validate_params" and described is not None:
            wf_id, names = described
            props["workflow"]["enum"] = [wf_id] + [i for i in workflow_ids if i != wf_id]
            props["params"].update({"properties": {n: {} for n in names}, "additionalProperties": False})
        tools.append(tool)
    return tools


def step_schema(tools: list[dict]) -> dict:
    """One JSON object per model step: `{"action": <name>, "arguments": {...}}` for each tool, or `{"say": text}`."""
    options = []
    for tool in tools:
        fn = tool["function"]
        params = copy.deepcopy(fn.get("parameters") or {"type": "object"})
        options.append({"type": "object", "additionalProperties": False, "required": ["action", "arguments"],
                        "properties": {"action": {"const": fn["name"]}, "arguments": params}})
    options.append({"type": "object", "additionalProperties": False, "required": ["say"],
                    "properties": {"say": {"type": "string"}}})
    return {"oneOf": options}
