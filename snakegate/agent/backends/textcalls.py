"""Reading a model's step out of plain text: text-form tool calls and constrained-JSON steps.

Small models, and servers whose chat template has no native tool calls
(Ollama with many models, llama.cpp without a tool template), write tool calls
as text: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, a fenced
or bare JSON object, or (in constrained-JSON mode) `{"action": ..., "arguments":
{...}}` / `{"say": "..."}`. These pure functions turn such text into calls and
words; a name that is not an offered action is left as text. Nothing here
touches the network or runs an action.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"^```(?:json|tool_call|tool)?\s*\n?(.*?)\n?```\s*$", re.S)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _first_object(text: str) -> tuple[dict | None, str]:
    """A JSON object at the start of `text` (after an optional code fence), and the text after it."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped.startswith("{"):
        return None, text
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except ValueError:
        return None, text
    return (value, stripped[end:].strip()) if isinstance(value, dict) else (None, text)


def as_call(obj: Any, names: set[str]) -> tuple[str, dict | str] | None:
    """(name, arguments) when `obj` is a tool call in any of the common shapes and names an offered action."""
    if not isinstance(obj, dict):
        return None
    for wrapper in ("tool_call", "function_call", "function"):
        if isinstance(obj.get(wrapper), dict) and ("name" in obj[wrapper] or "action" in obj[wrapper]):
            obj = obj[wrapper]
            break
    name = obj.get("name", obj.get("action", obj.get("tool")))
    if not isinstance(name, str) or name not in names:
        return None
    args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    if isinstance(args, str):
        parsed = _loads(args)
        args = parsed if isinstance(parsed, dict) else args   # a broken string is reported as bad JSON
    if args is None:
        args = {}
    return name, args


def text_calls(text: str | None, names: set[str]) -> tuple[list[tuple[str, dict | str]], str]:
    """Tool calls written as text, and the text that is left once they are taken out."""
    if not text or not names:
        return [], text or ""
    calls: list[tuple[str, dict | str]] = []
    if "<tool_call>" in text:
        for block in _TAGGED.findall(text):
            obj, _ = _first_object(block)
            call = as_call(obj, names)
            if call is None:
                return [], text   # not all blocks are calls we know: leave the whole text alone
            calls.append(call)
        return calls, _TAGGED.sub("", text).strip()
    obj, rest = _first_object(text)
    call = as_call(obj, names)
    return ([call], rest) if call is not None else ([], text)


def parse_step(text: str | None, names: set[str]) -> tuple[list[tuple[str, dict | str]], str]:
    """A constrained-JSON step: `{"action", "arguments"}` -> one call, `{"say": ...}` -> text.

    Anything else (a server that ignored the response format) is read as text-form calls, else as text."""
    obj, _ = _first_object(text or "")
    if obj is not None and isinstance(obj.get("say"), str) and "action" not in obj:
        return [], obj["say"]
    return text_calls(text, names)
