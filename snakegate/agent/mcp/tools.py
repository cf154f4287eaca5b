"""The MCP mapping of the platform actions: one `mcp_types.Tool` per action, plus the MCP-only `execute`.

Every platform action (agent/actions/platform.py `ACTIONS`) becomes an MCP tool with
the very argument schema the chat's OpenAI tools carry (`tools.tool_definition`
derives both from the action's pydantic model), so a model sees the same
names, types and descriptions through either door. `EXECUTE` (and
`EXECUTE_REFINEMENT`, its twin for a bounded refinement) is defined here,
with the same `Action` shape, because only the MCP server offers it: its one
argument is an invocation id that passed validate_params, and it has no
argument through which a model could claim an approval — the server asks the
person through MCP elicitation (agent/mcp/execute.py). Its handler, if ever
reached through `call_action`-style dispatch, refuses. Pure: no I/O.
"""

from __future__ import annotations

import functools

from mcp_types import Tool, ToolAnnotations
from pydantic import Field

from snakegate.agent.actions.base import Action, ActionContext, Args, Refused
from snakegate.agent.actions.platform import ACTIONS
from snakegate.agent.actions.wire import tool_definition

# Actions that only read: MCP clients may call them without asking the person.
READ_ONLY = frozenset({"search_workflows", "describe_workflow", "inspect_data", "find_connections", "list_runs",
                       "run_status", "explain_run", "compare_runs", "summarize_run"})


# Calling these twice does not do the same as once (a run; a step added or removed again is refused).
NOT_IDEMPOTENT = frozenset({"execute", "execute_refinement", "add_step", "remove_step", "assess_run"})


class ExecuteArgs(Args):
    invocation_id: str = Field(description="The invocation_id that validate_params (or fork_run, or a plan action) "
                                           "returned for the draft to run. The person is asked to confirm the exact "
                                           "config first.")


def _execute_outside_mcp(ctx: ActionContext, args: ExecuteArgs):
    raise Refused("needs_a_person", "execute runs only through `snakegate mcp`, after the person confirms the draft",
                  "ask the researcher to approve the draft in the chat panel, or to run it with `snakegate run`")


EXECUTE = Action(
    "execute",
    "Run a draft that passed validate_params (or fork_run, or a plan action), by its invocation_id. The server shows the person the "
    "exact config and asks them to confirm; nothing runs if they decline or cancel, or if the draft or the registry "
    "changed since it was validated. Progress is reported while Snakemake runs; the result names the run, its "
    "status and outputs (explain_run tells more).",
    ExecuteArgs, _execute_outside_mcp)


class ExecuteRefinementArgs(Args):
    approval_sha256: str = Field(description="The approval_sha256 that propose_refinement returned for the "
                                             "refinement to run. The person is shown the whole space and asked "
                                             "once.")


def _refine_outside_mcp(ctx: ActionContext, args: ExecuteRefinementArgs):
    raise Refused("needs_a_person", "execute_refinement runs only through `snakegate mcp`, after the person "
                                    "confirms the refinement",
                  "ask the researcher to approve the refinement in the chat panel, or to use `snakegate refine`")


EXECUTE_REFINEMENT = Action(
    "execute_refinement",
    "Run a bounded refinement that propose_refinement gated, by its approval_sha256. The server shows the person "
    "the whole space (every point, the budget, the stop rule, the check's advice) and asks ONCE; nothing runs if "
    "they decline or cancel. Then each point runs as a fork of the one before until the stop rule or the "
    "budget; only the approved points can run. The result is the table of variants with their verdicts.",
    ExecuteRefinementArgs, _refine_outside_mcp)


def mcp_tool(action: Action) -> Tool:
    """One action as an MCP tool: the OpenAI mapping's name, description and parameter schema, unchanged."""
    fn = tool_definition(action)["function"]
    read_only = action.name in READ_ONLY
    hints = ToolAnnotations(read_only_hint=read_only, open_world_hint=False)
    if not read_only:
        # validate_params/fork_run/plan actions write a draft file and execute a run folder: additive, never
        # destructive
        hints = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                idempotent_hint=action.name not in NOT_IDEMPOTENT, open_world_hint=False)
    return Tool(name=fn["name"], description=fn["description"], input_schema=fn["parameters"], annotations=hints)


def mcp_actions() -> dict[str, Action]:
    """The actions an MCP client may call, by name: every platform action, then execute and execute_refinement."""
    return {**ACTIONS, EXECUTE.name: EXECUTE, EXECUTE_REFINEMENT.name: EXECUTE_REFINEMENT}


def mcp_tools() -> list[Tool]:
    """`tools/list`: every platform action in registry order, then execute and execute_refinement."""
    return list(_tools())


@functools.cache
def _tools() -> tuple[Tool, ...]:
    # the list is the same for the server's whole life (no registry content in it): an MCP client may ask for
    # it before every call (the SDK's client does, to check results against output schemas), so build it once
    return tuple(mcp_tool(a) for a in mcp_actions().values())
