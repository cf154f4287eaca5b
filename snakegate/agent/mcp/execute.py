"""The MCP `execute` tool: a draft runs only after the person confirms its exact config through MCP elicitation.

`execute(invocation_id)` accepts only an invocation id that validate_params
(or fork_run, or a plan action) turned into a draft during this server run. Before asking, it
re-reads the draft (refused when the file changed on disk) and gates it again
(refused when the registry or an input changed, so the params no longer gate
to that id). When the client declared no form elicitation it refuses and
returns the one command the person can run themselves. Otherwise it shows the
exact config (for a plan, first its steps and the edges between them) and asks: through a standalone `elicitation/create` request on
handshake-era connections, through an `InputRequiredResult` on 2026-07-28
ones (the question's digest, the invocation id and a one-time nonce ride the
sealed `requestState`, so an answer counts only for the question that was
shown, and only once: the nonce is consumed under the state's lock, so the same
accepted answer replayed, even several times at once, starts at most one run).
Only an accepted form with "Run" ticked — the JSON boolean `true`, not "yes",
"on" or 1 — mints the `Approval`; there is no argument through which a model
could supply one. The draft is checked once
more, then `runner.execute` runs it (it gates again, and the invocation id in
the draft makes the top-level Snakefile refuse anything else), with progress
sent as MCP progress notifications and the client, the approver and the
approval time recorded as the run's origin; the result carries the run's summary
(agent/results.py: status, verdict, failure, key numbers, first rows), as the chat's
conversation gets it. A cancelled MCP request cancels
the run (recorded `cancelled`). Nothing here writes except through the runner.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import secrets
import threading

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp_types import CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field, StrictBool, ValidationError

from snakegate.agent import results
from snakegate.run import runner
from snakegate.agent.actions.platform import _bad_arguments, call_action  # noqa: PLC2701 - the actions' own refusal shape
from snakegate.agent.events import Approval
from snakegate.agent.actions.limits import MAX_ARGUMENT_BYTES, arguments_too_large, json_size
from snakegate.agent.mcp.audit import Call
from snakegate.agent.mcp.state import DraftEntry, McpState, client_label, error_dict, tool_result
from snakegate.agent.mcp.tools import EXECUTE
from snakegate.agent.drafts import draft_title, plan_lines
from snakegate.agent.prompt import relative
from snakegate.agent.redact import scrub
from snakegate.errors import UserError
from snakegate.gate.prove import gate
from snakegate.plan.config import is_plan
from snakegate.plan.prove import gate_plan
from snakegate.provenance.origin import OriginError, origin_fields
from snakegate.config.read import load_config_text

ELICIT_KEY = "approve"                 # the key of our one question in an InputRequiredResult
INPUT_REQUIRED_VERSION = "2026-07-28"  # from this protocol revision on, elicitation rides InputRequiredResult
MAX_NAME = 200                         # characters of the approver's name kept


class Confirm(BaseModel):
    # The confirmation form. `run` must be ticked: accepting the form alone runs nothing. A tick is the JSON
    # boolean true; "yes", "on", "true" or 1 are not (pydantic's lax bool would take them).

    run: StrictBool = Field(False, title="Run this exact config now",
                      description="Tick to run it. Leave it unticked, decline or cancel, and nothing runs.")
    approved_by: str = Field(title="Your name", description="Recorded in the run's provenance as the person who "
                                                             "approved it.")


class ConfirmRefinement(Confirm):
    # The same form for a bounded refinement: one tick runs its approved points, nothing else.

    run: StrictBool = Field(False, title="Run this refinement now",
                            description="Tick to run its points in order until the stop rule or the budget. Leave "
                                        "it unticked, decline or cancel, and nothing runs.")


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def can_elicit(session) -> bool:
    """Whether the client declared form elicitation (a bare `elicitation: {}` predates modes and means form)."""
    caps = session.client_capabilities
    el = caps.elicitation if caps is not None else None
    return el is not None and (el.form is not None or el.url is None)


def _uses_input_required(protocol_version: str | None) -> bool:
    return protocol_version is not None and is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


def _refuse(state: McpState, call: Call, result: dict) -> CallToolResult:
    call.refused(result["error"]["code"])
    return tool_result(state, result, ok=False)


# ---- is the draft still what was validated? -------------------------------------------------------
def check_current(state: McpState, entry: DraftEntry):
    """(None, invocation) when the draft file is unchanged and still gates to its invocation id, else (refusal, None).

    The DAG step is left to the runner: it cannot change the invocation id."""
    draft = entry.draft
    where = relative(draft.config_path, state.root)
    again = "call validate_params again; the person then confirms the new draft"
    try:
        text = draft.config_path.read_text(encoding="utf-8")
    except OSError as exc:
        return error_dict("stale_draft", f"the draft {where} cannot be read ({exc.strerror or exc}), so nothing ran",
                          again), None
    if text != draft.config_text:
        return error_dict("stale_draft", f"the draft {where} was changed after validate_params wrote it, so it is "
                                         "not what was validated; nothing ran", again), None
    invocation, error = load_config_text(text, where)
    if error is not None:
        return error_dict("stale_draft", f"the draft {where} cannot be read: {error.message}", again), None
    if is_plan(invocation):
        result = gate_plan(state.registry, invocation, state.settings, check_dag=False)
    else:
        result = gate(state.registry, invocation, state.settings, check_dag=False)
    if result.ok:
        return None, invocation
    if any(e.code == "invocation_mismatch" for e in result.errors):
        return error_dict("stale_invocation",
                          f"invocation {draft.invocation_id[:12]}… is stale: the workflow or an input file changed "
                          "since validate_params, so these params no longer gate to it; nothing ran", again), None
    problems = "; ".join(f"{e.path}: {e.message}" for e in result.errors[:3])
    return error_dict("stale_invocation", f"the draft {where} no longer passes the gate ({problems}); nothing ran",
                      again), None


# ---- asking the person ---------------------------------------------------------------------------
def question(state: McpState, entry: DraftEntry, client: str) -> tuple[str, dict]:
    """The confirmation's message (the exact config that will run) and its form schema."""
    from mcp.server.elicitation import render_elicitation_schema

    d = entry.draft
    where = relative(d.config_path, state.root)
    repeat = (f"\nThis draft already ran (run {', '.join(entry.runs)}); confirming runs it again as a new run.\n"
              if entry.runs else "")
    # a plan: its steps and the edges between them first, then the exact config (which says them again)
    steps = "".join(f"  {line}\n" for line in plan_lines(d.plan)) if d.plan is not None else ""
    message = (f"{client} asks snakegate to run {draft_title(d)}\n(invocation {d.invocation_id[:12]}…).\n"
               + (f"Its steps, in run order, and what each takes from another:\n{steps}" if steps else "")
               + _differences_text(d)
               + f"Exactly this config will run ({where}):\n\n{scrub(d.config_text, state.secrets())}\n{repeat}"
               f"{_shell_warning(state, d)}"
               "Tick \"Run this exact config now\" and accept to run it. Decline or cancel, and nothing runs.")
    schema = render_elicitation_schema(Confirm)
    schema["properties"]["approved_by"]["default"] = state.approver
    return message, schema


def _differences_text(draft) -> str:
    """What the person asked (the prompt's request) that this draft does not hold, before the config."""
    if not getattr(draft, "differences", ()):
        return ""
    return ("This draft DIFFERS FROM YOUR REQUEST (it passed the gate, but is not what you asked):\n"
            + "".join(f"  - {line}\n" for line in draft.differences))


def _shell_warning(state: McpState, draft) -> str:
    """A line per param whose value a community workflow pastes into a shell command unquoted and that holds a
    character the shell interprets (the workflow is parsed, never run); empty when there is none."""
    from snakegate.check.shellquote import exposed_in_folder, unsafe_for_shell

    steps = [(f"{s.name}.", s.workflow, s.params) for s in draft.plan.steps] if draft.plan is not None else \
        [("", draft.workflow, draft.params)]
    out = ""
    for prefix, wf_id, params in steps:
        wf = state.registry.get(wf_id)
        exposed = exposed_in_folder(wf.folder, wf.schema) if wf is not None else frozenset()
        out += "".join(f"\nWarning: the value of `{prefix}{name}` reaches a shell command unquoted: the shell would "
                       "run what follows ; | & $ or ` in it as commands.\n"
                       for name in sorted(exposed) if unsafe_for_shell(params.get(name)))
    return out


def _digest(message: str, schema: dict) -> str:
    return hashlib.sha256(json.dumps([message, schema], sort_keys=True).encode()).hexdigest()


def _retry_state(params, invocation_id: str) -> dict | None:
    """The state a 2026-07-28 retry carries back (unsealed by the SDK), when it is about this invocation."""
    try:
        state = json.loads(params.request_state or "null")
    except ValueError:
        return None
    return state if isinstance(state, dict) and state.get("invocation_id") == invocation_id else None


def _retry_answer(params, state: dict, q: str) -> ElicitResult | None:
    """The answer a retry carries, if it answers exactly the question that is asked now."""
    if state.get("q") != q:
        return None
    answer = (params.input_responses or {}).get(ELICIT_KEY)
    return answer if isinstance(answer, ElicitResult) else None


def decide(state: McpState, what: str, answer: ElicitResult, ask: str, tool: str = "execute",
           form_model: type[Confirm] = Confirm) -> tuple[str | None, dict | None]:
    """(approved_by, None) for an accepted form with Run ticked; (None, refusal) for anything else. `what` names
    what was asked about ("invocation 3f2a…"), `ask` what to do after a no, `tool` the tool that asks again."""
    if answer.action == "decline":
        return None, error_dict("declined", f"the person declined to run {what}; nothing ran", ask)
    if answer.action != "accept":
        return None, error_dict("cancelled", f"the person cancelled the confirmation of {what}; nothing ran", ask)
    try:
        form = form_model.model_validate(answer.content or {})
    except ValidationError as exc:
        if any(e["loc"] == ("run",) for e in exc.errors()):
            got = json.dumps((answer.content or {}).get("run"))[:40]
            return None, error_dict("declined", f"the confirmation of {what} came back with \"Run\" set "
                                                f"to {got}, not ticked (a ticked box is the JSON boolean true); "
                                                "nothing ran", f"call {tool} again to ask once more")
        return None, error_dict("declined", f"the confirmation of {what} came back without a valid "
                                            "answer; nothing ran", f"call {tool} again to ask once more")
    if not form.run:
        return None, error_dict("declined", f"the person accepted the form without ticking \"Run\" for "
                                            f"{what}; nothing ran", ask)
    name = " ".join(form.approved_by.split())[:MAX_NAME] or state.approver
    return name, None


async def confirm(state: McpState, ctx, params, call: Call, *, key: str, what: str, message: str, schema: dict,
                  command: str | None, ask: str, tool: str, form_model: type[Confirm] = Confirm):
    """Ask the person once about `key` (an invocation id, a refinement's sha256) with `message` and the form
    `schema`: (approved_by, None) when they ticked Run and accepted; otherwise (None, the answer to return now:
    a refusal, or on 2026-07-28 connections the InputRequiredResult that carries the question)."""
    if not can_elicit(ctx.session):
        hint = (f"tell the researcher to run it themselves from the registry root: {command}" if command else
                "tell the researcher to run it from `snakegate chat` or `snakegate refine`")
        return None, _refuse(state, call, error_dict(
            "needs_a_person", "this MCP client cannot ask the person to confirm a run (it declared no form "
                              "elicitation), so snakegate will not run it; nothing ran", hint)
                             | ({"command": command} if command else {}))
    q = _digest(message, schema)
    call.extra["elicitation"] = "asked"
    if _uses_input_required(ctx.protocol_version):
        answer, retried = None, _retry_state(params, key)
        if retried is not None:
            # One question, one answer: the nonce is spent whatever the answer says, so a replayed or
            # duplicated retry (the SDK's seal alone would let it through) never counts a second time.
            if not state.consume_confirmation(retried.get("nonce"), key):
                return None, _refuse(state, call, error_dict(
                    "confirmation_used", f"this confirmation of {what} was already answered (or is too old to "
                                         "count), so its answer does not count again; nothing ran",
                    f"call {tool} again without requestState: the person is asked once more"))
            answer = _retry_answer(params, retried, q)
        if answer is None:
            nonce = state.mint_confirmation(key)
            return None, InputRequiredResult(
                input_requests={ELICIT_KEY: ElicitRequest(params=ElicitRequestFormParams(
                    message=message, requested_schema=schema))},
                request_state=json.dumps({"invocation_id": key, "q": q, "nonce": nonce}))
    else:
        try:
            answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except Exception as exc:  # noqa: BLE001 - the client could not ask: never a run
            hint = (f"tell the researcher to run it themselves from the registry root: {command}" if command else
                    "tell the researcher to run it from `snakegate chat` or `snakegate refine`")
            return None, _refuse(state, call, error_dict(
                "needs_a_person", f"the confirmation could not be shown ({type(exc).__name__}: {exc}); nothing ran",
                hint) | ({"command": command} if command else {}))
    call.extra["elicitation"] = answer.action
    approved_by, refusal = decide(state, what, answer, ask, tool, form_model)
    if refusal is not None:
        return None, _refuse(state, call, refusal)
    return approved_by, None


# ---- running -------------------------------------------------------------------------------------
async def in_worker(ctx, work, first: str = "gated; Snakemake is starting"):
    """`work(progress, cancel)` in a worker thread, its runner progress sent back as MCP progress notifications
    (`progress(p)`, or `progress(p, prefix)` to say which run); a cancelled request sets `cancel` and waits
    until the run is recorded."""
    cancel, finished = threading.Event(), threading.Event()
    token = anyio.lowlevel.current_token()

    def progress(p: dict, prefix: str = "") -> None:
        done, total, rule = p.get("done") or 0, p.get("total"), p.get("rule")
        text = f"{done}/{total} jobs done; running {rule}" if total else f"running {rule or 'the first job'}"
        try:
            anyio.from_thread.run(ctx.session.report_progress, float(done), float(total) if total else None,
                                  prefix + text, token=token)
        except Exception:  # noqa: BLE001 - progress is advisory; a closed stream must not stop the run
            pass

    def run():
        try:
            return work(progress, cancel)
        finally:
            finished.set()

    await ctx.session.report_progress(0.0, None, first)
    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait)
        raise


async def _run(state: McpState, ctx, entry: DraftEntry, invocation: dict, options: runner.RunOptions, extra: dict):
    """runner.execute in a worker thread (in_worker); the draft remembers the run either way."""
    def work(progress, cancel):
        outcome = runner.execute(state.registry, state.settings, invocation, options, on_progress=progress,
                                 extra_record=extra, cancel=cancel)
        with state.lock:
            entry.runs.append(outcome.run_id)
        return outcome

    return await in_worker(ctx, work)


def _origin(state: McpState, ctx, approval: Approval) -> dict:
    return origin_fields(model=client_label(ctx.session), proposed_by_backend="mcp", approved_by=approval.approved_by,
                         approved_at=approval.approved_at, conversation_id=state.server_run_id,
                         transcript_sha256=approval.transcript_sha256)


async def run_approved(state: McpState, ctx, entry: DraftEntry, approval: Approval, call: Call) -> CallToolResult:
    """Run the draft `approval` was minted for (checked once more first)."""
    draft = entry.draft
    if not isinstance(approval, Approval) or approval.invocation_id != draft.invocation_id:
        raise UserError("a run needs the Approval minted from the person's confirmation of this draft")
    problem, invocation = await anyio.to_thread.run_sync(check_current, state, entry)
    if problem is not None:
        return _refuse(state, call, problem)
    try:
        extra = {"origin": _origin(state, ctx, approval)}
    except OriginError as exc:
        return _refuse(state, call, error_dict("origin", f"the run's origin cannot be recorded: {exc}; nothing ran",
                                               "tell the researcher; report it to the snakegate maintainers"))
    options = runner.RunOptions(cores=state.cores)
    if draft.fork is not None:
        options.forcerun = list(draft.fork.changed_rules)
        options.seed_from = state.settings.runs_dir / draft.fork.parent_run
        extra.update(parent_run=draft.fork.parent_run, parent_invocation_id=draft.fork.parent_invocation_id,
                     fork_changes=draft.fork.changes)
        if draft.fork.recovery_of:  # a recover_run draft: the failing check (or the failure) it answers
            extra["recovery_of"] = dict(draft.fork.recovery_of)
    try:
        outcome = await _run(state, ctx, entry, invocation, options, extra)
    except runner.GateRejected as exc:
        problems = "; ".join(f"{e.path}: {e.message}" for e in exc.result.errors[:3])
        return _refuse(state, call, error_dict("stale_invocation", f"the gate refused the draft at run time "
                                                                   f"({problems}); nothing ran",
                                               "call validate_params again; the person then confirms the new draft"))
    except UserError as exc:
        return _refuse(state, call, error_dict("run_refused", f"the run could not start: {exc.message}",
                                               "tell the researcher; this is not something new arguments fix"))
    run_dir = relative(outcome.run_dir, state.root)
    result = {"ok": outcome.status == "succeeded", "run_id": outcome.run_id, "status": outcome.status,
              "invocation_id": draft.invocation_id, "approved_by": approval.approved_by,
              "approved_at": approval.approved_at, "run_folder": run_dir, "provenance": f"{run_dir}/prov.json",
              "explain": call_action(state.ctx, "explain_run", {"run_id": outcome.run_id}).result,
              # the run's summary, as the chat's conversation gets it (bounded, masked; agent/results.py)
              "summary": results.text(results.summarize(outcome.run_dir, state.view, state.secrets()))}
    call.extra.update(run_id=outcome.run_id, status=outcome.status, approved_by=approval.approved_by)
    return tool_result(state, result, ok=True)


# ---- the tool ------------------------------------------------------------------------------------
def checked_arguments(state: McpState, params, call: Call, action) -> tuple[object, CallToolResult | None]:
    """(the action's arguments, None), or (None, the refusal): too large (never logged), or not its arguments."""
    arguments = params.arguments if isinstance(params.arguments, dict) else {}
    size = json_size(arguments)
    if size > MAX_ARGUMENT_BYTES:
        call.arguments = {}
        return None, _refuse(state, call, arguments_too_large(action.name, size))
    call.arguments = state.shown(arguments)
    try:
        return action.args.model_validate(arguments), None
    except ValidationError as exc:
        return None, _refuse(state, call, _bad_arguments(action, exc))


async def execute(state: McpState, ctx, params, call: Call) -> CallToolResult | InputRequiredResult:
    args, refused = checked_arguments(state, params, call, EXECUTE)
    if refused is not None:
        return refused
    with state.lock:
        entry = state.drafts.get(args.invocation_id)
        known = [i[:12] + "…" for i in state.drafts]
    if entry is None:
        return _refuse(state, call, error_dict(
            "unknown_invocation", f"no draft with invocation id `{args.invocation_id[:80]}` was validated by this "
                                  "server; nothing ran",
            "call validate_params first and pass the invocation_id it returns"
            + (f" (validated so far: {', '.join(known)})" if known else "")))
    problem, _ = await anyio.to_thread.run_sync(check_current, state, entry)
    if problem is not None:
        return _refuse(state, call, problem)
    message, schema = question(state, entry, client_label(ctx.session))
    approved_by, answered = await confirm(
        state, ctx, params, call, key=args.invocation_id, what=f"invocation {args.invocation_id[:12]}…",
        message=message, schema=schema, command=state.run_command(entry.draft),
        ask="ask the researcher what to change; validate_params again for a new draft", tool=EXECUTE.name)
    if answered is not None:
        return answered
    # The approval exists only from here on: minted from the person's accepted confirmation, used once.
    approval = Approval(invocation_id=entry.draft.invocation_id, approved_by=approved_by, approved_at=_utc_now(),
                        token=secrets.token_hex(32), transcript_sha256=state.audit.digest())
    return await run_approved(state, ctx, entry, approval, call)
