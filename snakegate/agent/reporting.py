"""Runs this conversation started, once they end: their summaries enter the conversation.

A mixin of `Conversation` (controller.py). `execute()` (approval.py) queues each run it ran;
`report_runs()` puts their summaries (agent/results.py, as a note the model reads as data, never as the
researcher's words) into the history as one message and lets the model or the guided dialogue answer it
at once: the dialogue reads the summary back and, after a failure or a failing check, proposes a recovery
as a fork draft. `record_runs()` only puts them into the history, without a request: a model then reads
them with the researcher's next message (the chat does this for a remote model, so a finished run costs no
request of its own); a message sent while some are still queued carries them first anyway. A note is
bounded (`summary_budget` characters), masked (the run's sensitive values, every value this conversation
knows to be secret, secret-shaped text) and shows paths as the model may see them. A report whose turn
fails is queued again. Reads run folders through agent/results.py; writes nothing but the history and
the audit log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from snakegate.agent import results
from snakegate.agent.actions.limits import PathView
from snakegate.agent.events import BackendFailed, Event
from snakegate.agent.redact import PLACEHOLDER


class Reporting:
    """Mixin: expects `settings`, `messages`, `_unreported`, `_lock`, `_open`, `_secrets()`, `_log`, `send()`
    and `suspected_secrets()` from Conversation."""

    summary_budget: int = results.BUDGET

    @property
    def unreported(self) -> list[str]:
        """The runs this conversation ran whose summary has not entered the history yet, oldest first."""
        with self._lock:
            return list(self._unreported)

    def ran(self, run_id: str) -> None:
        """A run this conversation started has ended: its summary is due."""
        with self._lock:
            self._unreported.append(run_id)

    def _note(self, run_ids: list[str]) -> str:
        """The summaries of these runs, one note each, masked; secret-shaped text the person would be asked
        about is the placeholder (nobody typed it, so nobody can be asked)."""
        view = PathView(self.settings.registry_root, self.settings.data_roots)
        notes = [results.note(results.summarize(self.settings.runs_dir / run_id, view, self._secrets()),
                              self.summary_budget) for run_id in run_ids]
        text = "\n\n".join(notes)
        for suspect in self.suspected_secrets(text):
            text = text.replace(suspect.value, PLACEHOLDER)
        return text

    def _record_queued(self) -> None:
        """Put the queued summaries into the history, before whatever comes next (the caller holds the lock
        and no turn is open)."""
        ids = self._unreported
        if not ids:
            return
        text = self._note(list(ids))
        ids.clear()
        self.messages.append({"role": "user", "content": text})
        self._log("run_summary", text=text)

    def record_runs(self) -> bool:
        """The queued summaries into the history now, without asking the model; False (still queued) while a
        turn is going: the next message carries them."""
        with self._lock:
            if self._open is not None and not self._open.done:
                return False
            self._record_queued()
            return True

    def report_runs(self, *, on_event: Callable[[Event], None] | None = None,
                    cancel: threading.Event | None = None) -> list[Event]:
        """The queued summaries as one message the model (or the guided dialogue) answers now; [] when none
        is queued. A turn that fails or is abandoned leaves them queued."""
        with self._lock:
            ids = list(self._unreported)
            self._unreported.clear()
        if not ids:
            return []
        events = self.send(self._note(ids), on_event=on_event, cancel=cancel)
        if not events or any(isinstance(e, BackendFailed) for e in events):
            with self._lock:
                self._unreported[:0] = ids
        return events
