"""Tool schemas are built once per process and handed out as copies: one conversation's narrowing (its workflow
ids as an enum, a described workflow's params) never reaches the next conversation, the plain OpenAI tools or an
MCP client's tools/list."""

from __future__ import annotations

import json

from snakegate.agent.actions.wire import conversation_tools, openai_tools
from snakegate.agent.mcp.tools import mcp_tools


def _by_name(tools: list[dict]) -> dict:
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def test_one_conversations_workflow_enum_does_not_reach_the_next_or_the_plain_tools():
    plain = json.dumps(openai_tools(), sort_keys=True)
    first = _by_name(conversation_tools(["alpha-wf"], described=("alpha-wf", {"properties": {"x": {"type": "string"}}})))
    assert first["describe_workflow"]["properties"]["workflow"]["enum"] == ["alpha-wf"]
    second = _by_name(conversation_tools(["beta-wf"]))
    assert second["describe_workflow"]["properties"]["workflow"]["enum"] == ["beta-wf"]
    assert "alpha-wf" not in json.dumps(second) and "alpha-wf" not in json.dumps(openai_tools())
    assert json.dumps(openai_tools(), sort_keys=True) == plain


def test_mcp_tools_list_is_the_same_each_time_and_carries_no_conversations_enum():
    conversation_tools(["gamma-wf"])
    once, again = mcp_tools(), mcp_tools()
    assert [t.model_dump() for t in once] == [t.model_dump() for t in again]
    assert "gamma-wf" not in json.dumps([t.model_dump(mode="json") for t in once])
