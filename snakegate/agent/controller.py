"""The conversation: runs the model/tool loop, keeps the draft, and lets only a UI approval execute it.

Owns the message history (OpenAI wire format), the sensitive values the
researcher entered out of band (`set_sensitive`/`enter_sensitive`), the current
`Draft` and the one live `Approval`. `send()` asks the backend for the next
step, runs the platform actions it asks for within the caps (agent/actions/limits.py),
writes a draft when validate_params or fork_run passes the gate, logs
everything to the audit log and returns events for the UI. A plan action
whose plan passes the gate makes a draft the same way; the plan being built
lives in the action context and is rolled back with the turn. A propose_refinement
whose whole space passes puts a refinement on offer instead (refining.py: one
approval from the UI runs its approved points, and nothing else). A failed request
rolls the whole turn back, so a retry is clean. A reply cut at the token limit (half a step, which a small
model would copy into every later request) is never kept: the turn drafts what the researcher stated
instead, or is rolled back when nothing was (cut_replies.py).
What the researcher stated (prefill.py) goes into a validate_params call wherever
the model left it out, and the described workflow's params are offered shaped by
the data (request_check.request_shape: the files that fit, the chosen table's
columns). A first request that names nothing ("analyse my data"), or hints an analysis but names no data
to run it on, gets a question back naming the workflows or the files that fit (asking.py, vague.py), not a
model's guess. It never raises on backend
trouble (a `BackendFailed` event instead), never sends a known sensitive value
to a model, and never runs a workflow on a model's request: `execute()` needs
the token that only `approve()` mints, and `approve()` is called by the UI.

A message that holds something secret-shaped (secretscan.py: a provider's key, "password is X", a value
next to a sensitive param's name) is refused by `send()` before anything is recorded or sent
(`SecretSuspected`); the door asks the person first (`suspected_secrets`) and then marks the values
secret (`mark_secret`: sent and logged as "<redacted>", earlier audit lines rewritten) or not
(`mark_not_secret`), or puts a param's value into its masked field (`set_sensitive`); those live in
sensitive.py, a mixin of this class.

A turn may be abandoned (`send(..., cancel=event)`, the UI's Esc): the model
request runs without the conversation's lock, so an abandoned turn is rolled
back by whoever comes next (its own thread when the reply arrives, or the next
`send`) and leaves no trace in the history, the draft or the approval.
Events can be streamed as they happen (`on_event`), so a UI shows each action
while the turn goes on. `restart` (or the word "restart") starts over, and
describing another workflow withdraws the draft (`DraftCleared`).
When a run it started ends, its summary enters the history as a note (reporting.py, agent/results.py).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from snakegate.agent import faithful, results, vague
from snakegate.agent.actions import limits
from snakegate.agent.actions.data import data_files
from snakegate.agent.actions.plans import PLAN_ACTIONS
from snakegate.agent.actions.registry import param_table
from snakegate.agent.actions.platform import ActionContext, Outcome, call_action, error_result, result_json
from snakegate.agent.approval import Approving
from snakegate.agent.asking import fitting, question_back
from snakegate.agent.audit import AuditLog
from snakegate.agent.cut_replies import CutReplies
from snakegate.agent.backend import Backend, BackendError, Reply
from snakegate.agent.drafts import write_draft
from snakegate.agent.events import (
    ActionCalled, Approval, AssistantSaid, BackendFailed, Draft, DraftCleared, Event,
)
from snakegate.agent.guided.parse import request_values
from snakegate.agent.history import call_key, last_params, request_view
from snakegate.agent.prompt import offered_ids, relative, system_prompt
from snakegate.agent.request_check import RequestShape, draft_differences, request_shape
from snakegate.agent.refining import Refining, is_refinement, ready_event
from snakegate.agent.repeats import answer_repeat, refusal_words
from snakegate.agent.redact import MASKED_NOTE_RE
from snakegate.agent.reporting import Reporting
from snakegate.agent.sensitive import SecretSuspected, Sensitive
from snakegate.agent.actions.wire import conversation_tools, params_schema
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import Settings

DEFAULT_GREETING = ("Hello! Tell me what you would like to analyse, and with which data. I can find a workflow, "
                    "check your files and fill in its parameters; you approve the run in the panel.")
RESTART_WORDS = ("restart", "start over")
RESTARTED = "Starting over: the previous draft is gone. Describe what you want to run."


@dataclass
class _Turn:
    """One `send()` in progress: where its messages start, what to restore if it fails or is abandoned,
    and what it has done so far (for the per-turn caps and repeat detection)."""

    cancel: threading.Event
    on_event: Callable[[Event], None] | None
    text: str = ""
    start: int = 0
    described: tuple | None = None
    plan: dict | None = None          # the plan being built when the turn began
    draft: Draft | None = None
    approval: Approval | None = None
    refinement: object = None                             # the refinement on offer when the turn began
    events: list[Event] = field(default_factory=list)
    calls: dict[str, tuple[str, str | None, int]] = field(default_factory=dict)  # call_key -> (summary, refusal, times)
    stuck: str | None = None   # a call the model repeated in vain (repeats.py): the turn stops and asks the researcher
    described_ids: set[str] = field(default_factory=set)  # workflows described in this turn
    drafts: int = 0
    done: bool = False

    def emit(self, event: Event) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


class Conversation(Approving, Reporting, Refining, Sensitive, CutReplies):
    """One chat session with one backend; the UI calls opening/send/set_sensitive/approve/execute."""

    def __init__(self, registry: Registry, settings: Settings, backend: Backend, *,
                 conversation_id: str | None = None, max_steps: int = 8, audit: bool = True):
        self.registry = registry
        self.settings = settings
        self.backend = backend
        self.conversation_id = conversation_id or "c-" + secrets.token_hex(6)
        self.max_steps = max_steps
        self.draft: Draft | None = None
        self.messages: list[dict] = [{"role": "system", "content": system_prompt(settings, registry)}]
        self.answered_by: str | None = None      # the model name the server last reported
        self.described: tuple[str, list[str]] | None = None  # the workflow whose params the model is filling
        self.audit = AuditLog(settings.audit_dir / f"{self.conversation_id}.jsonl") if audit else None
        self._ctx = ActionContext(registry, settings, author={"model": backend.model, "backend": backend.name,
                                                               "conversation": self.conversation_id})
        self._summaries: dict[str, str] = {}     # tool call id -> one-line summary (old results shrink to it)
        self._approval: Approval | None = None  # the one approval that may run the current draft
        self._lock = threading.RLock()  # guards messages, draft and approval; never held during a model request
        self._open: _Turn | None = None  # the turn in progress (or abandoned and not yet rolled back)
        self._not_secret: set[str] = set()  # secret-shaped values the person said are none
        self._unreported: list[str] = []  # runs it ran whose summary is not in the history yet (reporting.py)
        self._log("conversation", backend=backend.name, model=backend.model,
                  base_url=getattr(backend, "base_url", None), registry=str(settings.registry_root))

    @property
    def tools(self) -> list[dict]:
        """The actions as offered to the model now: workflow ids, the described workflow's parameters (names,
        types, allowed values, the data files that fit each file param, the columns of the table it reads now;
        what the researcher stated is filled in for the model), and no second description of a workflow in
        one turn."""
        shape = None
        files = [e["path"] for e in data_files(self.settings)]
        wf = self.registry.get(self.described[0]) if self.described else None
        if wf is not None:
            text = self._researcher_text()
            data = self._request_shape(wf)
            shape = (wf.id, params_schema(wf.schema, files, request_values(text, param_table(wf.schema)),
                                          headers=data.headers, candidates=data.candidates, prefilled=data.prefill))
        turn = self._open
        done = turn.described_ids if turn is not None else set()
        # a constrained step picks among the workflows the request search ranks (the clear choice alone)
        likely = [wf.id for wf in fitting(self.registry, turn.text)] if turn is not None and not done else None
        said = "\n".join(m["content"] for m in self.messages[1:] if isinstance(m.get("content"), str))
        keep = tuple(i for i in (wf.id if wf is not None else None,
                                 getattr(self.draft, "workflow", None)) if isinstance(i, str))
        ids = offered_ids(self.registry, turn.text if turn is not None else None, said, keep)
        return conversation_tools(ids, shape, done=done, files=files, likely=likely, runs=self._run_ids())

    def _run_ids(self) -> list[str]:
        """The run folders there are (names only), for the run actions' run ids."""
        try:
            return sorted(p.name for p in self.settings.runs_dir.iterdir() if p.is_dir())
        except OSError:
            return []

    def _request_shape(self, wf) -> RequestShape:
        """`wf` against the data and what the researcher said (request_check.py): the table chosen by their
        words, else the draft's, else the model's last try. The guided dialogue fills from their words itself."""
        if getattr(self.backend, "local", False):
            return RequestShape()
        draft = self.draft.params if self.draft is not None and self.draft.workflow == wf.id and \
            self.draft.plan is None else {}
        return request_shape(self.settings, wf.schema, self._researcher_text(), draft,
                             last_params(self.messages, wf.id))

    def _with_prefill(self, name: str, arguments):
        """A validate_params call with what the researcher stated put in where the model left it out (and, for
        a constrained model, over what it wrote instead); the names put in."""
        wf = self.registry.get(arguments.get("workflow")) if name == "validate_params" and \
            isinstance(arguments, dict) and isinstance(arguments.get("workflow"), str) else None
        if wf is None or not isinstance(arguments.get("params"), dict):
            return arguments, []
        stated, given = self._request_shape(wf).prefill, arguments["params"]
        # a model under a grammar (json mode, a small model) writes a stated value over with whatever it
        # picked: there the researcher's words win; a model with tool calls keeps its own (faithful.py compares)
        over = getattr(self.backend, "mode", None) == "json"
        added = [k for k in stated if k not in given or (over and given[k] != stated[k])]
        merged = {**given, **{k: stated[k] for k in added}} if over else {**{k: stated[k] for k in added}, **given}
        return (dict(arguments, params=merged), added) if added else (arguments, [])

    def _question_back(self, text: str) -> str | None:
        """The question (asking.py) for a model's turn that starts from nothing (no workflow being filled, no
        draft, plan or refinement) on a request that names no data, unless a question was just asked."""
        if getattr(self.backend, "local", False) or self.described or self.draft or self._ctx.plan \
                or self.refinement is not None:
            return None
        asked = [m for m in self.messages if m.get("role") == "assistant"][-1:]
        if asked and vague.asked_back(str(asked[0].get("content") or "")):
            return None
        return question_back(self.registry, self.settings, text)

    def _researcher_text(self) -> str:
        """What the researcher typed in this conversation (not the notes snakegate adds in their name)."""
        return "\n".join(m["content"] for m in self.messages if m.get("role") == "user"
                         and isinstance(m.get("content"), str) and not MASKED_NOTE_RE.match(m["content"])
                         and not results.NOTE_RE.match(m["content"]))

    def _own_words(self, said: str) -> str:
        """A reply that says back the controller's note on a differing draft (faithful.NOTE) becomes the
        controller's plain statement of the differences: its instructions are never shown as the model's answer."""
        if said and self.draft is not None and self.draft.differences and faithful.echoes_note(said):
            self._log("echo_replaced", text=said)
            return faithful.plain_differences(self.draft.differences)
        return said

    def _log(self, kind: str, **data) -> None:
        if self.audit is not None:
            self.audit.write(kind, **data)

    # ---- talking ---------------------------------------------------------------------------------
    def opening(self) -> list[Event]:
        """The backend's greeting; no model call, so the first paint is instant. It is snakegate's text, not the
        model's, so it stays out of the history (a small model would only repeat it)."""
        return [AssistantSaid(getattr(self.backend, "greeting", None) or DEFAULT_GREETING)]

    def send(self, text: str, *, on_event: Callable[[Event], None] | None = None,
             cancel: threading.Event | None = None) -> list[Event]:
        """One researcher message -> the model/tool loop until the model answers in text (or max_steps).

        `on_event` sees each event as it happens (from this thread). Setting `cancel` abandons the turn:
        `send` then returns [] as soon as it notices, and the turn leaves nothing behind."""
        if text.strip().lower() in RESTART_WORDS:
            return self.restart(on_event=on_event)
        suspects = self.suspected_secrets(text)
        if suspects:  # before anything is recorded: the audit log must not hold it either
            self._log("message_held_back", found=[s.kind for s in suspects])
            raise SecretSuspected(suspects)
        turn = _Turn(cancel or threading.Event(), on_event, text)
        with self._lock:
            self._settle()
            self._record_queued()  # a run that ended comes before the message that follows it
            self._refinement_turn(turn)
            turn.start, turn.draft, turn.approval, turn.described = (len(self.messages), self.draft,
                                                                     self._approval, self.described)
            turn.plan = self._ctx.plan  # plan actions replace it, never change it in place
            self.messages.append({"role": "user", "content": text})
            self._learn_secrets()  # a known secret typed again never reaches the model
            self._log("run_summary" if results.NOTE_RE.match(text) else "user", text=text)
            self._open = turn
            said = self._question_back(text)  # naming the choices: a small model would guess a draft
            if said is not None:
                self.messages.append({"role": "assistant", "content": said})
                self._log("asked_back", reason="the request names no data, file or value")
                turn.emit(AssistantSaid(said))
                return self._close(turn)
        for _ in range(self.max_steps):
            with self._lock:
                if turn.cancel.is_set():
                    return self._abandon(turn)
                tools = self.tools
                # A local backend (the guided dialogue) reads every earlier result; a model gets old ones trimmed.
                trim_before = 0 if getattr(self.backend, "local", False) else turn.start
                view = request_view(self.messages, trim_before, self._summaries, self._secrets())
                view[0] = {"role": "system", "content": system_prompt(self.settings, self.registry, text)}
            try:
                reply, failure, reached = self.backend.request(view, tools), None, True
            except BackendError as exc:
                reply, failure, reached = None, exc.message, exc.reached
            except Exception as exc:  # an SDK error or a backend bug: report it, keep the conversation
                reply, failure, reached = None, self._describe_failure(exc), None
            with self._lock:
                if turn.cancel.is_set():
                    return self._abandon(turn)
                if failure is not None:
                    return self._failed(turn, failure, reached)
                self._record_reply(reply, view)
                if reply.finish_reason == "length":
                    # a cut reply is half a step (raw JSON, a call without its end): kept, a small model would copy
                    # it into every later request; the audit log has it. What was stated is drafted instead.
                    return self._after_cut(turn)
                said = self._own_words((reply.text or "").strip())
                if not reply.tool_calls:
                    if not said:
                        return self._failed(turn, f"the model ({self._where()}) sent an empty reply; "
                                                  "send your message again or try another model", True)
                    self.messages.append({"role": "assistant", "content": said})
                    turn.emit(AssistantSaid(said))
                    if reply.asks_secret:
                        for event in self._secret_requests(only=reply.asks_secret):
                            turn.emit(event)
                    return self._close(turn)
                if said:
                    turn.emit(AssistantSaid(said))
                self._run_tool_calls(reply, turn)
                if turn.stuck is not None:  # what was stated is drafted instead, when nothing was yet
                    self._log("stopped", reason="repeated_call")
                    return self._after_stuck(turn, turn.stuck)
        with self._lock:
            if turn.cancel.is_set():
                return self._abandon(turn)
            note = (f"I stopped after {self.max_steps} steps without reaching an answer. Tell me what to do "
                    "next, or rephrase the request.")
            self.messages.append({"role": "assistant", "content": note})
            self._log("stopped", steps=self.max_steps)
            turn.emit(AssistantSaid(note))
            return self._close(turn)

    def restart(self, on_event: Callable[[Event], None] | None = None) -> list[Event]:
        """A new conversation with the same backend: history, draft, approval and sensitive values are dropped."""
        with self._lock:
            self._settle()
            if self._open is not None:  # a turn still running in another thread: it is abandoned
                self._open.cancel.set()
                self._settle()
            had_draft = self.draft is not None
            self.messages = self.messages[:1]
            self.draft, self._approval, self.described = None, None, None
            self._unreported.clear()
            self._forget_refinement()
            self._ctx.vault.clear()
            self._ctx.plan = None
            self._log("restart")
            turn = _Turn(threading.Event(), on_event)
            if had_draft:
                turn.emit(DraftCleared("you started over"))
            turn.emit(AssistantSaid(RESTARTED))
            return turn.events

    def _settle(self) -> None:
        """Roll back a turn that was abandoned while its model request was out (caller holds the lock)."""
        turn = self._open
        if turn is not None and turn.cancel.is_set() and not turn.done:
            self._abandon(turn)

    def _undo(self, turn: _Turn) -> None:
        del self.messages[turn.start:]
        self.draft, self._approval, self.described = turn.draft, turn.approval, turn.described
        self._ctx.plan = turn.plan
        self._undo_refinement(turn)
        turn.done = True

    def _abandon(self, turn: _Turn) -> list[Event]:
        if not turn.done:
            self._undo(turn)
            self._log("abandoned")
        if self._open is turn:
            self._open = None
        return []

    def _close(self, turn: _Turn) -> list[Event]:
        turn.done = True
        if self._open is turn:
            self._open = None
        return turn.events

    def _failed(self, turn: _Turn, message: str, reached: bool | None = None) -> list[Event]:
        # The whole turn goes: the researcher's message, every step after it and any draft it wrote (the file
        # stays on disk), so sending the message again is a clean retry.
        withdrawn = self.draft is not turn.draft
        self._undo(turn)
        self._log("failure", message=message)
        if withdrawn:
            turn.emit(DraftCleared("the turn that wrote it failed and was undone"))
        turn.emit(BackendFailed(message, reached))
        return self._close(turn)

    def _record_reply(self, reply: Reply, view: list[dict]) -> None:
        if reply.model:
            self.answered_by = reply.model
        wire = reply.wire or {}
        self._log("request", body=wire.get("request") or {"messages": view}, mode=wire.get("mode"))
        self._log("response", text=reply.text, finish_reason=reply.finish_reason, model=reply.model,
                  usage=reply.usage, tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments}
                                                 for c in reply.tool_calls])

    # ---- actions ---------------------------------------------------------------------------------
    def _run_tool_calls(self, reply: Reply, turn: _Turn) -> None:
        outcomes: list[tuple[str, Outcome, Draft | None]] = []
        for n, call in enumerate(reply.tool_calls):
            call_id = call.id or f"call_{len(self.messages)}_{n}"
            outcome, draft = self._one_call(call, n, turn), None
            if is_refinement(outcome.proposal):
                outcome, draft = self._refinement_draft(outcome, turn, reply.model)
            elif outcome.proposal is not None:
                outcome, draft = self._draft(outcome, turn, reply.model)
            elif self._starts_another_workflow(outcome):
                # the researcher is filling another workflow now: the old draft must not stay approvable
                self.draft, self._approval = None, None
                turn.emit(DraftCleared(f"the conversation moved on to {outcome.result.get('id')}"))
            self._summaries[call_id] = outcome.summary
            outcomes.append((call_id, outcome, draft))
        self._learn_secrets()
        # The history holds the redacted arguments: the next request must not carry a sensitive value.
        self.messages.append({"role": "assistant", "content": reply.text or "", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": o.name, "arguments": json.dumps(o.arguments, sort_keys=True, default=str)}}
            for call_id, o, _ in outcomes]})
        for call_id, outcome, draft in outcomes:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result_json(outcome.result)})
            turn.emit(ActionCalled(outcome.name, outcome.arguments, outcome.ok, outcome.summary))
            if draft is not None:
                turn.emit(ready_event(draft))
            if outcome.name == "describe_workflow" and outcome.ok and "params" in outcome.result:
                for event in self._secret_requests():
                    turn.emit(event)

    def _starts_another_workflow(self, outcome: Outcome) -> bool:
        """Describing a workflow the draft does not run (for a plan: none of its steps) moves on from it."""
        if self.draft is None or not outcome.ok or outcome.name != "describe_workflow" \
                or "params" not in outcome.result:
            return False
        running = {s.workflow for s in self.draft.plan.steps} if self.draft.plan else {self.draft.workflow}
        return outcome.result.get("id") not in running

    def _one_call(self, call, n: int, turn: _Turn) -> Outcome:
        if n >= limits.MAX_CALLS_PER_REPLY:
            result = limits.too_many_calls(call.name, n + 1)
            outcome = Outcome(call.name, {}, result, False, f"{call.name}: not run ({result['error']['message']})")
        else:
            # a plan action answers for the plan as it is now: the same call on a changed plan is no repeat
            key = call_key(call.name, {"arguments": call.arguments, "plan": self._ctx.plan}
                           if call.name in PLAN_ACTIONS else call.arguments)
            if key in turn.calls:  # made before in this turn: answered without running it (repeats.py)
                summary, refusal, times = turn.calls[key]
                outcome, stop = answer_repeat(call.name, summary, refusal, times)
                turn.calls[key] = (summary, refusal, times + 1)
                turn.stuck = stop or turn.stuck
            else:
                arguments, added = self._with_prefill(call.name, call.arguments)
                outcome = call_action(self._ctx, call.name, arguments)
                if added:  # said on the action line, so the researcher sees what came from their own words
                    outcome = replace(outcome, summary=outcome.summary + f" (from your request: {', '.join(added)})")
                turn.calls[key] = (outcome.summary, None if outcome.ok else refusal_words(outcome), 1)
                if outcome.name == "describe_workflow" and outcome.ok and "params" in outcome.result:
                    self.described = (outcome.result["id"], [p["name"] for p in outcome.result["params"]])
                    turn.described_ids.add(outcome.result["id"])
        self._log("action", name=outcome.name, arguments=outcome.arguments, ok=outcome.ok, summary=outcome.summary,
                  result=outcome.result)
        return outcome

    def _draft(self, outcome: Outcome, turn: _Turn, model: str | None) -> tuple[Outcome, Draft | None]:
        p = outcome.proposal
        if turn.drafts >= limits.MAX_DRAFTS_PER_TURN:
            result = limits.drafts_exhausted(outcome.name)
            return Outcome(outcome.name, outcome.arguments, result, False,
                           f"{outcome.name}: {result['error']['message']}"), None
        try:
            draft = replace(write_draft(p, self.settings.registry_root), answered_by=model)
        except Exception as exc:  # disk full, read-only folder, a value YAML cannot hold: no draft, never a crash
            result = error_result("draft_not_written",
                                  f"the params pass the gate but the draft "
                                  f"{relative(p.config_path, self.settings.registry_root)} cannot be written "
                                  f"({getattr(exc, 'strerror', None) or exc})",
                                  "tell the researcher to check that the drafts folder is writable")
            return Outcome(outcome.name, outcome.arguments, result, False,
                           f"{outcome.name} {p.workflow}: passes the gate, but the draft cannot be written"), None
        turn.drafts += 1
        # what the researcher said that the draft does not hold (faithful.py): said on every door, never "ready"
        draft = replace(draft, differences=draft_differences(self.registry, self.settings, draft,
                                                             self._researcher_text()))
        # A new draft replaces the old one, and the old approval stops working with it.
        self.draft, self._approval = draft, None
        self._log("draft", path=str(draft.config_path), invocation_id=draft.invocation_id, workflow=draft.workflow,
                  fork_of=draft.fork.parent_run if draft.fork else None,
                  steps={s.name: s.workflow for s in draft.plan.steps} if draft.plan else None,
                  differences=list(draft.differences))
        if draft.differences:  # the model reads it too, so it can tell the researcher or try again
            result = {**outcome.result, "differs_from_request": list(draft.differences),
                      "note": faithful.NOTE}
            outcome = Outcome(outcome.name, outcome.arguments, result, outcome.ok,
                              outcome.summary + " (differs from the request: " + "; ".join(draft.differences) + ")")
        return outcome, draft

    def _where(self) -> str:
        url = getattr(self.backend, "base_url", None)
        return f"{self.backend.name} model {self.backend.model}" + (f" at {url}" if url else "")

    def _describe_failure(self, exc: Exception) -> str:
        return (f"the model ({self._where()}) failed: {type(exc).__name__}: {exc}. The turn was undone; "
                "send your message again, or try another model")
