"""One request, no terminal: the conversation loop `snakegate ask` runs for scripts and evaluation.

`ask()` sends the request; when the guided dialogue then waits for optional
answers it says `done` (the defaults) once, as a person in a hurry would.
It stops at the draft: approving is the caller's decision (`--yes` means the
person who typed the command approves, through the same `approve()` the UI
uses). Returns what happened as plain data; prints nothing.

A request holding something secret-shaped (a provider's key, "password is X", a value next to a
sensitive param's name) is refused before it is sent or logged: a `UserError` with exit 2, a usage
error like a bad flag (nothing was attempted, and the command must change), apart from exit 1, which
says the request reached the model or the gate and got no draft. There is no one to ask here, and
no masked field: a sensitive value goes into a run config or the chat's masked field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from snakegate.agent.controller import Conversation, SecretSuspected
from snakegate.agent.events import ActionCalled, AssistantSaid, BackendFailed, Draft, DraftReady, Event, SecretRequested
from snakegate.errors import ExitCode, UserError


@dataclass
class AskResult:
    events: list[Event] = field(default_factory=list)
    draft: Draft | None = None
    failure: str | None = None     # the backend could not answer (server down, bad answer)
    last_text: str | None = None   # the last thing the model (or dialogue) said

    def to_json(self) -> list[dict]:
        out = []
        for e in self.events:
            if isinstance(e, AssistantSaid):
                out.append({"kind": "said", "text": e.text})
            elif isinstance(e, ActionCalled):
                out.append({"kind": "action", "name": e.name, "arguments": e.arguments, "ok": e.ok,
                            "summary": e.summary})
            elif isinstance(e, DraftReady):
                out.append({"kind": "draft", "path": str(e.draft.config_path), "invocation_id": e.draft.invocation_id,
                            "faithful": e.faithful, "differences": list(e.differences)})
            elif isinstance(e, SecretRequested):
                out.append({"kind": "sensitive", "workflow": e.workflow, "param": e.param})
            elif isinstance(e, BackendFailed):
                out.append({"kind": "failure", "message": e.message})
            else:
                out.append({"kind": type(e).__name__})
        return out


def _absorb(result: AskResult, events: list[Event]) -> None:
    result.events.extend(events)
    for e in events:
        if isinstance(e, AssistantSaid):
            result.last_text = e.text
        elif isinstance(e, BackendFailed):
            result.failure = e.message


def ask(conversation: Conversation, text: str) -> AskResult:
    """Run the request to a draft if the conversation can reach one without more answers."""
    result = AskResult()
    conversation.opening()
    try:
        _absorb(result, conversation.send(text))
    except SecretSuspected as exc:
        raise UserError(refusal_text(exc), ExitCode.USAGE) from None
    if conversation.draft is None and result.failure is None and conversation.backend.name == "guided" \
            and conversation.described is not None:
        _absorb(result, conversation.send("done"))  # keep the defaults of whatever was not named
    result.draft = conversation.draft
    return result


def refusal_text(exc: SecretSuspected) -> str:
    """What `snakegate ask` says when it keeps a request to itself: what looked secret (never the value) and
    where such a value goes instead."""
    listed = "; ".join(f"{s.kind} {s.hint}" for s in exc.suspects)
    return (f"the request was not sent: it holds what looks like a secret ({listed}); nothing went to the "
            "model or into the audit log. Ask again without it: a sensitive param's value goes into the run "
            "config (`snakegate init <workflow>`, then `snakegate run`) or into the masked field of "
            "`snakegate chat`; if it is no secret, rephrase it")
