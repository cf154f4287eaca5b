"""What a model is shown of the conversation: old tool results trimmed, every known secret scrubbed.

`request_view` copies the OpenAI-format history for one request: results of
earlier turns become their one-line summary (the latest parameter table is
kept whole, since filling params needs it), a finished run's summary note of an
earlier turn shrinks to its first lines unless it is the latest, and every known sensitive value,
in any message (the researcher's own text included), becomes "<redacted>".
`call_key` identifies an action call so a repeat within a turn is noticed;
`last_params` finds the params a model last tried for a workflow.
Pure functions on plain data: nothing is read, written or sent from here.
"""

from __future__ import annotations

import json
from typing import Any

from snakegate.agent.redact import scrub
from snakegate.agent.summary_text import NOTE_RE, shortened

KEEP_WHOLE = ("describe_workflow",)  # the latest result of these stays whole in later turns


def call_key(name: str, arguments: Any) -> str:
    return name + " " + json.dumps(arguments, sort_keys=True, default=str)


def scrub_messages(messages: list[dict], secrets: list[str]) -> list[dict]:
    """Each message with every secret replaced, in text content and in tool-call arguments."""
    if not secrets:
        return messages
    out = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("content"), (str, list)):
            m["content"] = scrub(m["content"], secrets)
        if m.get("tool_calls"):
            m["tool_calls"] = [dict(tc, function=dict(tc["function"], arguments=scrub(tc["function"]["arguments"],
                                                                                     secrets)))
                               for tc in m["tool_calls"]]
        out.append(m)
    return out


def _names_by_call(messages: list[dict]) -> dict[str, str]:
    return {tc.get("id"): (tc.get("function") or {}).get("name")
            for m in messages for tc in m.get("tool_calls") or []}


def request_view(messages: list[dict], turn_start: int, summaries: dict[str, str], secrets: list[str]) -> list[dict]:
    """The history to send: tool results before `turn_start` trimmed to their summaries (except the latest of
    each KEEP_WHOLE action), secrets scrubbed everywhere."""
    names = _names_by_call(messages)
    keep: set[str] = set()
    for name in KEEP_WHOLE:
        latest = [m.get("tool_call_id") for m in messages[:turn_start]
                  if m.get("role") == "tool" and names.get(m.get("tool_call_id")) == name]
        keep.update(latest[-1:])
    notes = [i for i, m in enumerate(messages) if _is_note(m)]
    view = []
    for i, m in enumerate(messages):
        call_id = m.get("tool_call_id")
        if i < turn_start and m.get("role") == "tool" and call_id not in keep and call_id in summaries:
            m = dict(m, content=json.dumps({"trimmed": summaries[call_id] + " (an earlier result, shortened; call "
                                            "the action again if you need it whole)"}))
        elif i < turn_start and i in notes[:-1]:
            m = dict(m, content=shortened(m["content"]))
        view.append(m)
    return scrub_messages(view, secrets)


def _is_note(message: dict) -> bool:
    """A finished run's summary, as reporting.py adds it."""
    return message.get("role") == "user" and isinstance(message.get("content"), str) \
        and NOTE_RE.match(message["content"]) is not None


def last_params(messages: list[dict], workflow: str) -> dict:
    """The params of the latest validate_params call for `workflow` in the history ({} when none): the file a
    model last chose for a table tells which columns it may pick next."""
    for m in reversed(messages):
        for tc in reversed(m.get("tool_calls") or []):
            fn = tc.get("function") or {}
            if fn.get("name") != "validate_params":
                continue
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (TypeError, ValueError, RecursionError):
                continue
            if isinstance(args, dict) and args.get("workflow") == workflow and isinstance(args.get("params"), dict):
                return args["params"]
    return {}
