"""The one mapping from platform actions to the OpenAI chat-completions `tools` format.

Each action's pydantic argument model gives the JSON Schema of its
parameters; nothing else describes a tool to a model. There is deliberately no
execute tool: running needs an approval only the UI can mint. Pure: no I/O.
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
