"""`snakegate mcp`: the platform actions behind the gate, served to any MCP client with the official `mcp` SDK.

Builds a low-level `mcp.server.Server` (so the tool list is exactly the one
mapping of agent/mcp/tools.py, and every refusal is the chat's own
`{"error": {code, message, hint}}`), with:
- tools: the platform actions, dispatched through `call_action` (same argument
  checks, caps, redaction and path hiding as the chat), plus `execute`
  (agent/mcp/execute.py: a run needs the person's confirmation by elicitation),
  and `execute_refinement` (agent/mcp/refine.py: a bounded refinement that
  propose_refinement gated runs after ONE confirmation showing its whole space).
  A validate_params, fork_run or plan action that passes writes its draft, as
  the chat does (a plan is built across calls, as in the chat).
  A sensitive (`x-sensitive`) value is refused before anything uses it: over
  MCP it would pass through the client and its model, and form elicitation
  must not carry secrets, so such workflows are run from `snakegate chat` or
  `snakegate run`. The refused value is scrubbed from every later answer and
  from the audit log.
- resources: per workflow its manifest, parameter table and SKILL.md;
- a prompt (and the server instructions) carrying the chat's system
  instructions plus what is different over MCP;
- an audit line for every call (agent/mcp/audit.py).
Transports: stdio, or streamable HTTP (the command decides which address may
be bound). Never runs anything without an approval minted by mcp_execute.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from dataclasses import replace

import anyio
import anyio.to_thread
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, GetPromptResult, ListPromptsResult, ListResourcesResult,
    ListResourceTemplatesResult, ListToolsResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Resource, ResourceTemplate, TextContent, TextResourceContents,
)

from snakegate import __version__
from snakegate.agent.actions.registry import param_table
from snakegate.agent.actions.platform import call_action
from snakegate.agent.drafts import write_draft
from snakegate.agent.request_check import draft_differences
from snakegate.agent.mcp.audit import Call, McpAudit, new_server_run_id
from snakegate.agent.mcp.execute import execute
from snakegate.agent.mcp.refine import execute_refinement, offer
from snakegate.agent.mcp.state import DraftEntry, McpState, client_info, error_dict, tool_result
from snakegate.agent.mcp.tools import EXECUTE, EXECUTE_REFINEMENT, mcp_actions, mcp_tools
from snakegate.agent.prompt import relative, system_prompt
from snakegate.agent.redact import PLACEHOLDER, redact_params, secret_strings, sensitive_values
from snakegate.agent.refining import is_refinement
from snakegate.contract.dialect import did_you_mean
from snakegate.provenance import runstore
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import Settings

NAME = "snakegate"
PROMPT = "snakegate"
KINDS = {"manifest": ("workflow.yaml", "application/yaml", "manifest (workflow.yaml): id, version, tools, rule IO, "
                                                           "outputs"),
         "params": (None, "application/json", "parameter table: names, types, defaults, allowed values, which are "
                                              "input files, columns or sensitive"),
         "skill": ("SKILL.md", "text/markdown", "SKILL.md: how to choose values, and what to do on each gate error")}
RESOURCE = re.compile(r"^snakegate://workflows/(?P<id>[^/]+)/(?P<kind>manifest|params|skill)$")

MCP_NOTES = """Over MCP (this server) step 6 is different: when validate_params (or a plan action) passes, call execute with its invocation_id. snakegate shows the person the exact config and asks them to confirm; only their confirmation runs it. You cannot approve a run, and a declined or cancelled confirmation runs nothing. If their client cannot show the confirmation, execute returns the command they can run themselves: pass it on.
Sensitive (x-sensitive) values never go through MCP: a workflow that needs one is run with `snakegate chat` (masked field) or `snakegate run`.
A bounded refinement (a few candidate values of the params a failing check names, a budget, a stop rule): propose_refinement gates the whole space around a run; then call execute_refinement with its approval_sha256. The person is shown the whole space and confirms it once; only its points run, each a fork of the one before, and the result is the table of variants with their verdicts.
Each workflow's manifest, parameter table and SKILL.md are resources: snakegate://workflows/<id>/manifest, /params and /skill."""


def instructions(state: McpState) -> str:
    return system_prompt(state.settings, state.registry) + "\n\n" + MCP_NOTES


# ---- a sensitive value sent through MCP ---------------------------------------------------------
def _nested(changes: dict) -> dict:
    """fork_run's dotted changes ({"service.password": v}) as a params object, to find sensitive values in it."""
    out: dict = {}
    for key, value in changes.items():
        parts = str(key).split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
        node[parts[-1]] = value
    return out


def _fork_schema(state: McpState, ref) -> dict | None:
    if not isinstance(ref, str) or not ref.strip() or "/" in ref or ref.startswith("."):
        return None
    try:
        wf_id = runstore.read_run(runstore.find_run(state.settings.runs_dir, ref)).get("workflow")
    except (runstore.RunNotFound, OSError, ValueError):
        return None
    wf = state.registry.get(wf_id) if isinstance(wf_id, str) else None
    return wf.schema if wf is not None else None


def _sensitive_in(state: McpState, name: str, arguments: dict) -> tuple[list[tuple[str, dict, dict]], str] | None:
    """[(where, schema, params)] of every params object the call carries, and the argument that holds them."""
    if name in ("validate_params", "add_step", "replace_step"):
        wf_id, params = arguments.get("workflow"), arguments.get("params")
        wf = state.registry.get(wf_id) if isinstance(wf_id, str) else None
        return ([("params", wf.schema, params)] if wf is not None and isinstance(params, dict) else []), "params"
    if name == "propose_plan" and isinstance(arguments.get("steps"), list):
        found = []
        for step in arguments["steps"]:
            wf_id = step.get("workflow") if isinstance(step, dict) else None
            wf = state.registry.get(wf_id) if isinstance(wf_id, str) else None
            if wf is not None and isinstance(step.get("params"), dict):
                found.append((f"steps.{step.get('name')}.params", wf.schema, step["params"]))
        return found, "steps"
    if name == "propose_refinement":  # every candidate of every varied param, as the params it would set
        schema, vary = _fork_schema(state, arguments.get("run_id")), arguments.get("vary")
        if schema is None or not isinstance(vary, dict):
            return [], "vary"
        lists = {k: v for k, v in vary.items() if isinstance(v, list)}
        return [(f"vary[{i}]", schema, _nested({k: v[i] for k, v in lists.items() if i < len(v)}))
                for i in range(max((len(v) for v in lists.values()), default=0))], "vary"
    if name in ("fork_run", "recover_run"):
        schema, params = _fork_schema(state, arguments.get("run_id")), arguments.get("changes")
        params = _nested(params) if isinstance(params, dict) else None
        return ([("params", schema, params)] if schema is not None and isinstance(params, dict) else []), "changes"
    return None


def _safely_redacted(schema: dict, params) -> object:
    try:
        return redact_params(schema, params)
    except Exception:  # noqa: BLE001 - a hostile shape: log nothing of it rather than a value that may be secret
        return PLACEHOLDER


def _redacted(key: str, arguments: dict, schemas: dict) -> dict:
    """The arguments as the audit log keeps them: every sensitive value (every changed value of a fork) as
    the placeholder."""
    if key == "changes":
        return {**arguments, key: {k: PLACEHOLDER for k in arguments[key]}}
    if key == "vary":
        return {**arguments, key: {k: [PLACEHOLDER] * len(v) if isinstance(v, list) else PLACEHOLDER
                                   for k, v in arguments[key].items()}}
    if key == "steps":
        return {**arguments, "steps": [
            {**step, "params": _safely_redacted(schemas[f"steps.{step.get('name')}.params"], step["params"])}
            if isinstance(step, dict) and f"steps.{step.get('name')}.params" in schemas else step
            for step in arguments["steps"]]}
    return {**arguments, key: _safely_redacted(schemas["params"], arguments[key])}


def sensitive_refusal(state: McpState, name: str, arguments: dict) -> tuple[dict, dict] | None:
    """(refusal, arguments as logged) when validate_params, a plan action or fork_run carries a sensitive
    param, else None."""
    carried = _sensitive_in(state, name, arguments)
    if carried is None:
        return None
    places, key = carried
    found: dict[str, object] = {}
    for where, schema, params in places:
        try:
            values = sensitive_values(schema, params)
        except Exception:  # noqa: BLE001 - a hostile shape: the action's own shape check refuses it
            continue
        found.update({f"{where}.{'.'.join(map(str, parts))}": v for parts, v in values.items()})
    if not found:
        return None
    state.learn_secrets(secret_strings([v for v in found.values() if v != PLACEHOLDER]))
    shown = _redacted(key, arguments, {where: schema for where, schema, _ in places})
    refusal = error_dict(
        "sensitive_value",
        f"{', '.join(f'`{w}`' for w in found)} {'is' if len(found) == 1 else 'are'} sensitive (x-sensitive): a "
        "value for it must never pass through an MCP client or its model, so it was not used and is not recorded",
        "over MCP a workflow that needs a sensitive value cannot be filled (MCP form elicitation must not carry "
        "secrets); tell the researcher to run it with `snakegate chat`, which takes the value in a masked field, "
        "or with `snakegate run` on a config they write themselves")
    return refusal, shown


# ---- tools ---------------------------------------------------------------------------------------
def run_action(state: McpState, name: str, arguments: dict) -> tuple[dict, bool, dict]:
    """One platform action over MCP (blocking; the handler runs it in a worker thread): (result, ok, logged args)."""
    refused = sensitive_refusal(state, name, arguments)
    if refused is not None:
        return refused[0], False, refused[1]
    outcome = call_action(state.ctx, name, arguments)
    result, ok = outcome.result, outcome.ok
    if is_refinement(outcome.proposal):  # a gated space, kept for execute_refinement (agent/mcp/refine.py)
        return offer(state, outcome.proposal, result), ok, outcome.arguments
    if outcome.proposal is not None:
        try:
            draft = write_draft(outcome.proposal, state.root, door="mcp")
        except (OSError, ValueError) as exc:
            where = relative(outcome.proposal.config_path, state.root)
            return error_dict("draft_not_written", f"{name} passed the gate, but the draft {where} cannot be written "
                                                   f"({getattr(exc, 'strerror', None) or exc})",
                              "tell the researcher to check that the drafts folder is writable"), False, \
                outcome.arguments
        with state.lock:
            said = "\n".join(state.requests)
        draft = replace(draft, differences=draft_differences(state.registry, state.settings, draft, said))
        with state.lock:
            earlier = state.drafts.get(draft.invocation_id)
            # the same draft validated again keeps its runs, so confirming it again says it is a repeat
            runs = earlier.runs if earlier is not None and earlier.draft.config_text == draft.config_text else []
            state.drafts[draft.invocation_id] = DraftEntry(draft, runs)
        result = {**result, "draft": relative(draft.config_path, state.root),
                  "next": "call execute with this invocation_id: the person is shown the exact config and asked to "
                          "confirm the run",
                  "run_it_yourself": state.run_command(draft)}
        if draft.differences:  # the person is shown these in the confirmation too
            result["differs_from_request"] = list(draft.differences)
            result["note"] = ("the draft passed the gate but differs from what the researcher asked; tell them each "
                              "difference, or validate again with what they asked")
    return result, ok, outcome.arguments


async def call_tool(state: McpState, ctx, params, call: Call) -> CallToolResult:
    name = params.name
    if name == EXECUTE.name:
        return await execute(state, ctx, params, call)
    if name == EXECUTE_REFINEMENT.name:
        return await execute_refinement(state, ctx, params, call)
    if name not in mcp_actions():
        close = did_you_mean(name, list(mcp_actions()))
        call.refused("unknown_action")
        return tool_result(state, error_dict("unknown_action", f"there is no tool `{name[:80]}`",
                                             (f"did you mean `{close}`? " if close else "")
                                             + f"the tools are: {', '.join(mcp_actions())}"), ok=False)
    arguments = params.arguments if isinstance(params.arguments, dict) else {}
    result, ok, shown = await anyio.to_thread.run_sync(run_action, state, name, arguments)
    call.arguments = state.shown(shown)
    if not ok:
        gate_codes = [e.get("code") for e in result.get("errors") or [] if isinstance(e, dict)]
        call.refused((result.get("error") or {}).get("code") or ",".join(dict.fromkeys(gate_codes)) or "refused")
    return tool_result(state, result, ok)


# ---- resources and the prompt --------------------------------------------------------------------
def resources(state: McpState) -> list[Resource]:
    out = []
    for wf_id in state.registry.ids():
        wf = state.registry.get(wf_id)
        for kind, (file, mime, what) in KINDS.items():
            if file is not None and not (wf.folder / file).is_file():
                continue
            out.append(Resource(uri=f"snakegate://workflows/{wf_id}/{kind}", name=f"{wf_id}/{kind}",
                                title=f"{wf.manifest.title}: {kind}", description=f"{wf_id} {what}", mime_type=mime))
    return out


def read_resource(state: McpState, uri: str) -> tuple[str, str]:
    """(text, mime type) of one resource; MCPError naming the valid forms when there is no such resource."""
    m = RESOURCE.match(uri)
    wf = state.registry.get(m["id"]) if m else None
    if wf is None:
        ids = state.registry.ids()
        close = did_you_mean(m["id"], ids) if m else None
        raise MCPError(code=INVALID_PARAMS, message=(
            f"no resource `{uri[:200]}`; resources are snakegate://workflows/<id>/manifest, /params and /skill"
            + (f" (did you mean workflow `{close}`?)" if close else f" for the workflows {', '.join(ids[:20])}"
               + (f" and {len(ids) - 20} more (search_workflows finds them)" if len(ids) > 20 else ""))))
    file, mime, _ = KINDS[m["kind"]]
    if file is None:
        table = {"id": wf.id, "version": wf.manifest.version, "params": param_table(wf.schema)}
        return json.dumps(table, indent=2, sort_keys=True, default=str), mime
    path = wf.folder / file
    if not path.is_file():
        raise MCPError(code=INVALID_PARAMS, message=f"{wf.id} has no {file}")
    return path.read_text(encoding="utf-8"), mime


def prompt_text(state: McpState, request: str | None) -> str:
    text = instructions(state)
    if request and request.strip():
        text += f"\n\nThe researcher's request: {request.strip()}"
    return text


# ---- the server ----------------------------------------------------------------------------------
def build_server(state: McpState) -> Server:
    """The MCP server over `state`: every handler audited, every failure an MCP error rather than a crash."""

    async def audited(ctx, call: Call, work):
        try:
            return await work()
        except MCPError as exc:
            if call.outcome == "ok":  # a refusal the handler already named stays a refusal
                call.failed(str(exc.error.code))
            raise
        except anyio.get_cancelled_exc_class():
            call.failed("cancelled")
            raise
        except Exception as exc:  # fail closed: an error, never an ok; the traceback stays on the server's stderr
            call.failed("internal_error")
            traceback.print_exc(file=sys.stderr)
            raise MCPError(code=INTERNAL_ERROR, message=f"snakegate failed inside {call.method}: "
                                                        f"{type(exc).__name__}; see the server's stderr")
        finally:
            state.audit.record(call, client_info(ctx.session))

    async def on_list_tools(ctx, params) -> ListToolsResult:
        return await audited(ctx, Call("tools/list"), lambda: _value(ListToolsResult(tools=mcp_tools())))

    async def on_call_tool(ctx, params):
        call = Call("tools/call", name=params.name[:80])
        return await audited(ctx, call, lambda: call_tool(state, ctx, params, call))

    async def on_list_resources(ctx, params) -> ListResourcesResult:
        listed = ListResourcesResult(resources=resources(state))
        return await audited(ctx, Call("resources/list"), lambda: _value(listed))

    async def on_list_resource_templates(ctx, params) -> ListResourceTemplatesResult:
        templates = [ResourceTemplate(uri_template=f"snakegate://workflows/{{id}}/{kind}", name=f"workflow {kind}",
                                      description=f"a workflow's {what}", mime_type=mime)
                     for kind, (_, mime, what) in KINDS.items()]
        return await audited(ctx, Call("resources/templates/list"),
                             lambda: _value(ListResourceTemplatesResult(resource_templates=templates)))

    async def on_read_resource(ctx, params) -> ReadResourceResult:
        uri = str(params.uri)
        call = Call("resources/read", name=uri[:200])

        async def work():
            try:
                text, mime = await anyio.to_thread.run_sync(read_resource, state, uri)
            except MCPError:
                call.refused("unknown_resource")
                raise
            return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=state.shown(text), mime_type=mime)])

        return await audited(ctx, call, work)

    async def on_list_prompts(ctx, params) -> ListPromptsResult:
        prompt = Prompt(name=PROMPT, title="Run a registry workflow through the gate",
                        description="The instructions snakegate's chat gives its model, with what differs over MCP.",
                        arguments=[PromptArgument(name="request", description="What the researcher wants to run "
                                                                              "(optional)", required=False)])
        return await audited(ctx, Call("prompts/list"), lambda: _value(ListPromptsResult(prompts=[prompt])))

    async def on_get_prompt(ctx, params) -> GetPromptResult:
        call = Call("prompts/get", name=params.name[:80], arguments=state.shown(params.arguments or {}))

        async def work():
            if params.name != PROMPT:
                call.refused("unknown_prompt")
                raise MCPError(code=INVALID_PARAMS, message=f"no prompt `{params.name[:80]}`; the prompt is `{PROMPT}`")
            request = (params.arguments or {}).get("request")
            if isinstance(request, str) and request.strip():
                with state.lock:  # the person's own words: each later draft is checked against them
                    state.requests.append(request.strip())
            text = prompt_text(state, request)
            return GetPromptResult(description="snakegate's instructions for driving the gated actions",
                                   messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))])

        return await audited(ctx, call, work)

    server = Server(NAME, version=__version__, title="snakegate",
                    description="Curated Snakemake workflows behind a gate: search, describe, inspect data, validate, "
                                "and run with the person's confirmation.",
                    instructions=instructions(state),
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool, on_list_resources=on_list_resources,
                    on_list_resource_templates=on_list_resource_templates, on_read_resource=on_read_resource,
                    on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)
    # 2026-07-28 confirmations ride requestState through the client: sealed under a key only this process holds.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=NAME))
    return server


async def _value(value):
    return value


def make_state(registry: Registry, settings: Settings, *, approver: str, transport: str,
               cores: int = 1) -> McpState:
    run_id = new_server_run_id()
    audit = McpAudit(settings.audit_dir, run_id, transport=transport, registry=settings.registry_root)
    return McpState(registry=registry, settings=settings, approver=approver, server_run_id=run_id, audit=audit,
                    cores=cores)


# ---- transports ----------------------------------------------------------------------------------
async def serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server, host: str, port: int) -> None:
    """Streamable HTTP at http://host:port/mcp (the SDK adds DNS-rebinding protection for loopback hosts)."""
    import uvicorn

    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def serve(registry: Registry, settings: Settings, *, approver: str, http: bool = False, host: str = "127.0.0.1",
          port: int = 8765, cores: int = 1) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP). Says on stderr where the audit
    log is; a port that cannot be bound is a UserError."""
    from snakegate.errors import ExitCode, UserError

    transport = f"streamable-http http://{host}:{port}/mcp" if http else "stdio"
    state = make_state(registry, settings, approver=approver, transport=transport, cores=cores)
    if state.audit.error:
        raise UserError(state.audit.error + "; snakegate mcp keeps an audit log of every call and will not serve "
                        "without one", ExitCode.USAGE)
    server = build_server(state)
    where = relative(state.audit.folder / "calls.jsonl", settings.registry_root)
    print(f"snakegate mcp: serving {settings.registry_root} over {transport}; audit log {where}", file=sys.stderr,
          flush=True)
    try:
        anyio.run(serve_http, server, host, port) if http else anyio.run(serve_stdio, server)
    except SystemExit as exc:  # uvicorn exits when it cannot bind
        if http and exc.code not in (0, None):
            raise UserError(f"cannot listen on {host}:{port} (is the port in use?); pick another with --port",
                            ExitCode.USAGE)
        raise
    return ExitCode.OK
