"""The conversation: runs the model/tool loop, keeps the draft, and lets only a UI approval execute it.

Owns the message history (OpenAI wire format), the current `Draft` and the
one live `Approval`. `send()` asks the backend for a turn, runs the platform
actions it asks for (agent/actions.py), writes a draft run config when
validate_params passes the gate, and returns events for the UI. It never
raises on backend trouble (a `BackendFailed` event instead) and never runs a
workflow on a model's request: `execute()` needs the token that only
`approve()` mints, and `approve()` is called by the UI, never by a model.

A turn may be abandoned (`send(..., cancel=event)`, the UI's Esc): the model
request runs without the conversation's lock, so an abandoned turn is rolled
back by whoever comes next (its own thread when the reply arrives, or the next
`send`) and leaves no trace in the history, the draft or the approval.
Events can be streamed as they happen (`on_event`), so a UI shows each action
while the turn goes on.
"""

from __future__ import annotations

import datetime as _dt
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from snakegate import runner
from snakegate.agent.actions import ACTIONS, ActionContext, Outcome, Proposal, call_action, error_result, result_json
from snakegate.agent.backend import Backend, BackendError
from snakegate.agent.events import (ActionCalled, Approval, AssistantSaid, BackendFailed, Draft, DraftCleared,
                                    DraftReady, Event)
from snakegate.agent.tools import openai_tools
from snakegate.errors import UserError
from snakegate.provenance.origin import OriginError, origin_fields
from snakegate.registry import Registry
from snakegate.runconfig import dump_yaml, read_run_config, write_atomic
from snakegate.settings import Settings

RESTART_WORDS = ("restart", "start over")
RESTARTED = "Starting over: the previous draft is gone. Describe what you want to run."

DEFAULT_GREETING = ("Hello! Tell me what you would like to analyse, and with which data. I can find a workflow, "
                    "check your files and fill in its parameters; you approve the run in the panel.")


def system_prompt(settings: Settings) -> str:
    roots = ", ".join(_relative(r, settings.registry_root) for r in settings.data_roots) or "(none configured)"
    return f"""You help a researcher run curated workflows from the snakegate registry.

What you can do: call the platform actions {", ".join(ACTIONS)}, and talk to the researcher. Nothing else:
you cannot run a workflow, write files or execute code.

How to work:
1. Find a workflow with search_workflows (an empty query lists them all).
2. Call describe_workflow and read its parameters and its SKILL.md before choosing any value. Use only the
   exact parameter names it lists; never invent a parameter name or a file path.
3. Input files must be inside the data roots ({roots}); use inspect_data to list them and to see a table's
   columns. Paths are relative to the registry root, as inspect_data shows them.
4. Call validate_params with the workflow id and the params. Leave out a parameter to use its default.
5. If it is refused, do not guess: ask the researcher, quoting each error's message and hint, and offer its
   choices when there are any. Then validate again.
6. When validate_params returns ok, tell the researcher the draft is ready and that they must review and
   approve it in the panel to run it. You cannot run it yourself.

Sensitive values appear as "<redacted>": send "<redacted>" back unchanged to keep the researcher's value.
Be brief and concrete."""


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Turn:
    """One `send()` in progress: where its messages start, what to restore if it is abandoned."""

    cancel: threading.Event
    on_event: Callable[[Event], None] | None
    start: int = 0
    draft: Draft | None = None
    approval: Approval | None = None
    events: list[Event] = field(default_factory=list)
    done: bool = False

    def emit(self, event: Event) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


class Conversation:
    """One chat session with one backend; the UI calls opening/send/approve/execute."""

    def __init__(self, registry: Registry, settings: Settings, backend: Backend, *,
                 conversation_id: str | None = None, max_steps: int = 8):
        self.registry = registry
        self.settings = settings
        self.backend = backend
        self.conversation_id = conversation_id or "c-" + secrets.token_hex(6)
        self.max_steps = max_steps
        self.draft: Draft | None = None
        self.messages: list[dict] = [{"role": "system", "content": system_prompt(settings)}]
        self.tools = openai_tools()
        self._ctx = ActionContext(registry, settings)
        self._approval: Approval | None = None  # the one approval that may run the current draft
        self._greeted = False
        self._lock = threading.RLock()  # guards messages, draft and approval; never held during a model request
        self._open: _Turn | None = None  # the turn in progress (or abandoned and not yet rolled back)

    # ---- talking ---------------------------------------------------------------------------------
    def opening(self) -> list[Event]:
        """The backend's greeting; no model call, so the first paint is instant."""
        text = getattr(self.backend, "greeting", None) or DEFAULT_GREETING
        if not self._greeted:
            self.messages.append({"role": "assistant", "content": text})
            self._greeted = True
        return [AssistantSaid(text)]

    def send(self, text: str, *, on_event: Callable[[Event], None] | None = None,
             cancel: threading.Event | None = None) -> list[Event]:
        """One researcher message -> the model/tool loop until the model answers in text (or max_steps).

        `on_event` sees each event as it happens (from this thread). Setting `cancel` abandons the turn:
        `send` then returns [] as soon as it notices, and the turn leaves nothing behind."""
        if text.strip().lower() in RESTART_WORDS:
            return self.restart(on_event=on_event)
        turn = _Turn(cancel or threading.Event(), on_event)
        with self._lock:
            self._settle()
            turn.start, turn.draft, turn.approval = len(self.messages), self.draft, self._approval
            self.messages.append({"role": "user", "content": text})
            self._open = turn
        for _ in range(self.max_steps):
            with self._lock:
                if turn.cancel.is_set():
                    return self._abandon(turn)
                history = list(self.messages)
            try:
                reply, failure = self.backend.request(history, self.tools), None
            except BackendError as exc:
                reply, failure = None, exc.message
            except Exception as exc:  # an SDK error or a backend bug: report it, keep the conversation
                reply, failure = None, self._describe_failure(exc)
            with self._lock:
                if turn.cancel.is_set():
                    return self._abandon(turn)
                if failure is not None:
                    return self._failed(turn, failure)
                if reply.text and reply.text.strip():
                    turn.emit(AssistantSaid(reply.text))
                if not reply.tool_calls:
                    if not (reply.text and reply.text.strip()):
                        return self._failed(turn, f"the model ({self._where()}) sent an empty reply; "
                                                  "send your message again or try another model")
                    self.messages.append({"role": "assistant", "content": reply.text})
                    return self._close(turn)
                self._run_tool_calls(reply, turn)
        with self._lock:
            if turn.cancel.is_set():
                return self._abandon(turn)
            note = (f"I stopped after {self.max_steps} steps without reaching an answer. Tell me what to do "
                    "next, or rephrase the request.")
            self.messages.append({"role": "assistant", "content": note})
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
            self._greeted = False
            self.opening()
            self.draft, self._approval = None, None
            self._ctx.vault.clear()
            turn = _Turn(threading.Event(), on_event)
            if had_draft:
                turn.emit(DraftCleared("you started over"))
            turn.emit(AssistantSaid(RESTARTED))
            return turn.events

    def set_sensitive(self, workflow: str, name: str, value) -> None:
        """Hold a sensitive param's value typed in the UI's masked field, out of band: it never enters the
        history. The model refers to it as "<redacted>", which validate_params replaces by this value."""
        with self._lock:
            self._ctx.vault[(workflow, (name,))] = value

    def _settle(self) -> None:
        """Roll back a turn that was abandoned while its model request was out (caller holds the lock)."""
        turn = self._open
        if turn is not None and turn.cancel.is_set() and not turn.done:
            self._abandon(turn)

    def _abandon(self, turn: _Turn) -> list[Event]:
        if not turn.done:
            del self.messages[turn.start:]
            self.draft, self._approval = turn.draft, turn.approval
            turn.done = True
        if self._open is turn:
            self._open = None
        return []

    def _close(self, turn: _Turn) -> list[Event]:
        turn.done = True
        if self._open is turn:
            self._open = None
        return turn.events

    def _run_tool_calls(self, reply, turn: _Turn) -> None:
        outcomes: list[tuple[str, Outcome, Draft | None]] = []
        for n, call in enumerate(reply.tool_calls):
            call_id = call.id or f"call_{len(self.messages)}_{n}"
            outcome, draft = call_action(self._ctx, call.name, call.arguments), None
            if outcome.proposal is not None:
                outcome, draft = self._write_draft(outcome)
            elif self._starts_another_workflow(outcome):
                # the researcher is filling another workflow now: the old draft must not stay approvable
                self.draft, self._approval = None, None
                turn.emit(DraftCleared(f"the conversation moved on to {outcome.arguments.get('workflow')}"))
            outcomes.append((call_id, outcome, draft))
        # The history holds the redacted arguments: the next request must not carry a sensitive value.
        self.messages.append({"role": "assistant", "content": reply.text or None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": o.name, "arguments": json.dumps(o.arguments, sort_keys=True, default=str)}}
            for call_id, o, _ in outcomes]})
        for call_id, outcome, draft in outcomes:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result_json(outcome.result)})
            turn.emit(ActionCalled(outcome.name, outcome.arguments, outcome.ok, outcome.summary))
            if draft is not None:
                turn.emit(DraftReady(draft))

    def _starts_another_workflow(self, outcome: Outcome) -> bool:
        return (self.draft is not None and outcome.ok and outcome.name == "describe_workflow"
                and outcome.arguments.get("workflow") != self.draft.workflow)

    def _write_draft(self, outcome: Outcome) -> tuple[Outcome, Draft | None]:
        p: Proposal = outcome.proposal
        config = {"workflow": p.workflow, "version": p.version, "invocation_id": p.invocation_id,
                  "params": p.params}
        # The same invocation always gives the same text, so two conversations never disagree about a file.
        text = ("# Draft run config from snakegate chat; it passed the gate.\n"
                f"# Approve it in the chat, or run it yourself: "
                f"snakegate run {_relative(p.config_path, self.settings.registry_root)}\n")
        try:
            text += dump_yaml(config)
            p.config_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(p.config_path, text)
        except Exception as exc:  # disk full, read-only folder, a value YAML cannot hold: no draft, never a crash
            result = error_result("draft_not_written",
                                  f"the params pass the gate but the draft {p.config_path} cannot be written "
                                  f"({getattr(exc, 'strerror', None) or exc})",
                                  "tell the researcher to check that the drafts folder is writable")
            return Outcome(outcome.name, outcome.arguments, result, False,
                           f"validate {p.workflow}: passes the gate, but the draft cannot be written", None), None
        # A new draft replaces the old one, and the old approval stops working with it.
        self.draft = Draft(workflow=p.workflow, version=p.version, invocation_id=p.invocation_id,
                           params=p.params, config_path=p.config_path, config_text=text)
        self._approval = None
        return outcome, self.draft

    def _failed(self, turn: _Turn, message: str) -> list[Event]:
        # Nothing happened this turn: drop the researcher's message so sending it again is a clean retry.
        # (Tool steps that did run stay: their tool messages answer their calls, so the history is valid.)
        if len(self.messages) == turn.start + 1:
            del self.messages[turn.start:]
        turn.emit(BackendFailed(message))
        return self._close(turn)

    def _where(self) -> str:
        url = getattr(self.backend, "base_url", None)
        return f"{self.backend.name} model {self.backend.model}" + (f" at {url}" if url else "")

    def _describe_failure(self, exc: Exception) -> str:
        return (f"the model ({self._where()}) failed: {type(exc).__name__}: {exc}. Nothing was lost; "
                "check the server and send your message again")

    # ---- approving and running (UI only) ---------------------------------------------------------
    def approve(self, approved_by: str) -> Approval:
        """Mint the approval for the current draft. Called by the UI when the human approves, never by a model."""
        if self.draft is None:
            raise UserError("there is no draft to approve yet: the model must first validate a parameter set")
        if not isinstance(approved_by, str) or not approved_by.strip():
            raise UserError(f"approved_by must name the person approving (got {approved_by!r})")
        self._approval = Approval(invocation_id=self.draft.invocation_id, approved_by=approved_by.strip(),
                                  approved_at=_utc_now(), token=secrets.token_hex(32))
        return self._approval

    def execute(self, approval: Approval, options: runner.RunOptions | None = None,
                on_progress: Callable[[dict], None] | None = None) -> runner.RunOutcome:
        """Run the current draft through the runner (which gates again). UserError on any approval mismatch."""
        if not isinstance(approval, Approval):
            raise UserError("execute needs the Approval the panel mints when the researcher approves the draft")
        draft, current = self.draft, self._approval
        if draft is None:
            raise UserError("there is no draft to run: the model must first validate a parameter set")
        if approval.invocation_id != draft.invocation_id:
            raise UserError(f"this approval is for invocation {approval.invocation_id[:12]}…, but the current draft "
                            f"is {draft.invocation_id[:12]}… (a newer validation replaced it); approve the "
                            "current draft")
        if current is None or not secrets.compare_digest(approval.token.encode(), current.token.encode()) \
                or (approval.approved_by, approval.approved_at) != (current.approved_by, current.approved_at):
            raise UserError(f"the approval for draft {draft.invocation_id[:12]}… is not valid (not minted by this "
                            "conversation, or already used); approve the draft in the panel again")
        try:
            on_disk = draft.config_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"the draft {draft.config_path} cannot be read ({exc.strerror or exc}); "
                            "ask the model to validate the params again")
        if on_disk != draft.config_text:
            raise UserError(f"the draft {draft.config_path} was changed after it was written; "
                            "ask the model to validate the params again and approve the new draft")
        invocation, error = read_run_config(draft.config_path)
        if error is not None:
            raise UserError(f"the draft {draft.config_path} cannot be read: {error.message}")
        try:
            origin = origin_fields(model=self.backend.model, proposed_by_backend=self.backend.name,
                                   approved_by=approval.approved_by, approved_at=approval.approved_at,
                                   conversation_id=self.conversation_id)
        except OriginError as exc:
            raise UserError(f"the run's origin cannot be recorded: {exc}")
        self._approval = None  # one approval, one run
        return runner.execute(self.registry, self.settings, invocation, options or runner.RunOptions(),
                              on_progress=on_progress, extra_record={"origin": origin})
