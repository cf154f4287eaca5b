"""Sensitive values and secrets of a conversation: out-of-band values, and secret-shaped text in a message.

A mixin of `Conversation` (controller.py). A sensitive param's value is typed in the UI's masked field
(`set_sensitive`, `enter_sensitive`) and held in the action context's vault, never in the history: the model
refers to it as "<redacted>". A message that holds something secret-shaped (secretscan.py: a provider's key,
"password is X", a value next to a sensitive param's name) is found by `suspected_secrets` before it is
sent or recorded (`SecretSuspected`); the person then marks the values secret (`mark_secret`: sent and
logged as "<redacted>", earlier audit lines rewritten) or not (`mark_not_secret`). Every value known to be
sensitive is scrubbed from the history and the audit log (`_learn_secrets`). Never sends a known
sensitive value to a model, never writes one to the audit log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from snakegate.agent.actions.platform import conversation_secrets
from snakegate.agent.events import Event, SecretRequested
from snakegate.agent.history import scrub_messages
from snakegate.agent.redact import MASKED_NOTE, secret_strings, sensitive_params
from snakegate.agent.secretscan import Suspect, find_secrets
from snakegate.errors import ExitCode, UserError


class SecretSuspected(UserError):
    """A message holds what looks like a secret: it was neither sent nor recorded. `suspects` say what
    (each value, what it looks like, the sensitive param it was typed for)."""

    def __init__(self, suspects: list[Suspect]):
        self.suspects = suspects
        listed = "; ".join(f"{s.kind} {s.hint}" for s in suspects)
        super().__init__(f"the message was not sent: it holds what looks like a secret ({listed}), and a model "
                         "keeps every message in each later request. Type a sensitive param's value in its "
                         "masked field, or take the value out of the message", ExitCode.USAGE)


class Sensitive:
    """Mixin: expects `registry`, `described`, `draft`, `messages`, `audit`, `_ctx`, `_lock`, `_not_secret`,
    `_log` and `send()` from Conversation."""

    def _secrets(self) -> list[str]:
        return conversation_secrets(self._ctx)

    def _learn_secrets(self) -> None:
        """Scrub every value now known to be sensitive from the history and the audit log."""
        known = self._secrets()
        self.messages = scrub_messages(self.messages, known)
        if self.audit is not None:
            self.audit.learn(known)

    # ---- sensitive values, out of band -----------------------------------------------------------
    def sensitive_params(self, workflow: str | None = None) -> list[dict]:
        """The sensitive params of `workflow` (default: the one being filled): name, description, entered?"""
        wf_id = workflow or (self.described[0] if self.described else None) or (self.draft and self.draft.workflow)
        wf = self.registry.get(wf_id) if wf_id else None
        if wf is None:
            return []
        return [{"workflow": wf.id, "param": ".".join(parts), "description": sub.get("description", ""),
                 "entered": (wf.id, parts) in self._ctx.vault}
                for parts, sub in sensitive_params(wf.schema).items()]

    def _secret_requests(self, only: str | None = None) -> list[Event]:
        return [SecretRequested(p["workflow"], p["param"], p["description"]) for p in self.sensitive_params()
                if (only is None and not p["entered"]) or p["param"] == only]

    def set_sensitive(self, workflow: str | None, name: str, value) -> None:
        """Hold a sensitive param's value typed in the UI's masked field, out of band: it never enters the
        history. The model refers to it as "<redacted>", which validate_params replaces by this value, and
        the value is scrubbed from all text bound for the model. `name` is dotted for a nested param;
        `workflow` None means the one being filled."""
        with self._lock:
            known = {p["param"]: p for p in self.sensitive_params(workflow)}
            if name not in known:
                where = workflow or (self.described[0] if self.described else "the current workflow")
                raise UserError(f"`{name}` is not a sensitive parameter of {where}"
                                + (f" (sensitive: {', '.join(known)})" if known else " (it has none)"))
            if value is None or (isinstance(value, str) and not value):
                raise UserError(f"`{name}`: an empty value was entered; type the value in the masked field")
            self._ctx.vault[(known[name]["workflow"], tuple(name.split(".")))] = value
            self._log("sensitive_set", workflow=known[name]["workflow"], param=name)
            self._learn_secrets()

    # ---- secrets typed into a message ------------------------------------------------------------
    def suspected_secrets(self, text: str) -> list[Suspect]:
        """What in `text` looks like a secret (secretscan.py, with the sensitive params of the workflow being
        filled) and is neither known sensitive (scrubbed anyway) nor said by the person to be no secret."""
        names = [p["param"] for p in self.sensitive_params()]
        with self._lock:
            cleared = set(self._secrets()) | self._not_secret
        return [s for s in find_secrets(text, names) if s.value not in cleared]

    def mark_secret(self, values: list[str]) -> None:
        """The person says these values are secrets: from now on each is "<redacted>" in every request and
        in the audit log, the lines already written for this conversation included."""
        with self._lock:
            self._ctx.known_secrets.update(secret_strings(values))
            self._log("secret_marked", count=len(values))
            self._learn_secrets()

    def mark_not_secret(self, values: list[str]) -> None:
        """The person says these secret-shaped values are no secrets: messages holding them are sent as typed."""
        with self._lock:
            self._not_secret.update(values)
            self._log("secret_shape_allowed", count=len(values))

    def enter_sensitive(self, workflow: str | None, name: str, value, *,
                        on_event: Callable[[Event], None] | None = None,
                        cancel: threading.Event | None = None) -> list[Event]:
        """`set_sensitive`, then a turn telling the model (or the guided dialogue) that the value was entered,
        never what it is: the guided dialogue's masked prompt path."""
        self.set_sensitive(workflow, name, value)
        return self.send(MASKED_NOTE.format(param=name), on_event=on_event, cancel=cancel)
