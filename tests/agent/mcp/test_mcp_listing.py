"""What an MCP client sees before it calls anything: the tools (one mapping from the chat's actions, plus execute),
each workflow's manifest, parameter table and SKILL.md as resources, and a prompt with the system instructions.
Also: the HTTP transport binds only loopback addresses unless told otherwise. SDK client, real server process.
"""

from __future__ import annotations

import json

import pytest
from mcp import MCPError

from mcp_session import McpSession, audit_lines
from registry_copies import snakegate
from snakegate.agent.prompt import system_prompt
from snakegate.agent.actions.wire import openai_tools
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings


def test_lists_the_chats_actions_with_their_schemas_then_execute_and_every_workflows_resources_and_the_prompt(
        registry):
    with McpSession.stdio(registry) as s:
        tools = {t.name: t for t in s.tools()}
        resources = {r.uri: r for r in s.resources()}
        prompts = s.prompts()
    chat = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert list(tools) == [*chat, "execute", "execute_refinement"]
    for name, fn in chat.items():  # the same argument schemas and descriptions as the chat's model gets
        assert tools[name].input_schema == fn["parameters"] and tools[name].description == fn["description"]
    assert tools["inspect_data"].annotations.read_only_hint is True
    assert tools["execute"].annotations.read_only_hint is False
    assert set(resources) == {f"snakegate://workflows/{wf}/{kind}" for wf in ("secret-note", "tabular-profile")
                              for kind in ("manifest", "params")} | {"snakegate://workflows/tabular-profile/skill"}
    assert resources["snakegate://workflows/tabular-profile/skill"].mime_type == "text/markdown"
    assert [p.name for p in prompts] == ["snakegate"]


def test_resources_hold_the_manifest_the_parameter_table_and_skill_md_and_the_prompt_the_instructions(registry):
    wf = registry / "workflows" / "tabular-profile"
    with McpSession.stdio(registry) as s:
        manifest = s.read("snakegate://workflows/tabular-profile/manifest").contents[0].text
        table = json.loads(s.read("snakegate://workflows/tabular-profile/params").contents[0].text)
        skill = s.read("snakegate://workflows/tabular-profile/skill").contents[0].text
        secret_table = json.loads(s.read("snakegate://workflows/secret-note/params").contents[0].text)
        with pytest.raises(MCPError, match="did you mean workflow `tabular-profile`"):
            s.read("snakegate://workflows/tabular-profil/manifest")
        prompt = s.prompt("snakegate", {"request": "profile the penguins table"}).messages[0].content.text
        instructions = s.client.instructions
    assert manifest == (wf / "workflow.yaml").read_text() and skill == (wf / "SKILL.md").read_text()
    assert [p["name"] for p in table["params"]] == ["dataset_file", "missing_strategy", "drop_duplicates", "columns"]
    assert {p["name"]: p["sensitive"] for p in secret_table["params"]}["token"] is True
    chat_prompt = system_prompt(load_settings(registry), Registry.load(registry))
    assert prompt.startswith(chat_prompt) and "call execute with its invocation_id" in prompt
    assert prompt.endswith("The researcher's request: profile the penguins table")
    assert instructions.startswith(chat_prompt)


def test_each_call_is_audited_with_its_outcome_code_and_duration(registry):
    """ok, refused (the client asked for something that is not there) and error (snakegate failed: here a
    SKILL.md that is not UTF-8), one line each, with how long the call took."""
    (registry / "workflows" / "tabular-profile" / "SKILL.md").write_bytes(b"# Tabular profile\n\xff\xfe broken\n")
    with McpSession.stdio(registry) as s:
        s.read("snakegate://workflows/tabular-profile/manifest")
        with pytest.raises(MCPError):
            s.read("snakegate://workflows/tabular-profil/manifest")
        with pytest.raises(MCPError):
            s.read("snakegate://workflows/tabular-profile/skill")
    lines = audit_lines(registry)
    reads = [(r["name"].rsplit("/", 2)[-2:], r["outcome"], r.get("code")) for r in lines
             if r["method"] == "resources/read"]
    assert [(where, outcome) for where, outcome, _ in reads] == [
        (["tabular-profile", "manifest"], "ok"), (["tabular-profil", "manifest"], "refused"),
        (["tabular-profile", "skill"], "error")]
    assert reads[0][2] is None and reads[1][2] and reads[2][2]  # a refusal and an error say their code
    for line in lines:
        assert isinstance(line["duration_ms"], (int, float)) and 0 <= line["duration_ms"] < 60_000, line


@pytest.mark.parametrize("args,fix", [
    (["--http", "--host", "0.0.0.0"], "--allow-remote"),
    (["--http", "--host", "192.168.1.7", "--port", "9000"], "no authentication"),
    (["--host", "127.0.0.1"], "add --http"),
    (["--http", "--port", "70000"], "1-65535"),
])
def test_http_binds_only_loopback_unless_told_and_says_why(registry, args, fix):
    proc = snakegate(registry, "mcp", *args, timeout=60)
    assert proc.returncode == 2 and fix in proc.stderr, proc.stderr
    assert not (registry / ".snakegate").exists()  # refused before a server (or its audit folder) existed
