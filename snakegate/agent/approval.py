"""The UI-only half of a conversation: minting the one approval for the current draft, and running it.

A mixin of `Conversation` (controller.py). `approve()` is called by the UI when
the person approves (or by `snakegate ask --yes`, where the person typing the
command is the approver), never by a model; it records the approval in the
audit log and keeps the log's hash so the run names the exact transcript.
`execute()` runs the draft through the runner, which gates it again, only with
the approval `approve()` minted for exactly this draft, once; a fork draft
re-runs only what its change affects (a recovery's records the failing check it answers), a plan draft runs
whole as one plan run. The run's origin names the requested model, the model that answered, the backend,
the approver and the transcript; once it ends, its summary is due to the conversation (reporting.py).
"""

from __future__ import annotations

import datetime as _dt
import secrets
import threading
from collections.abc import Callable

from snakegate.run import runner
from snakegate.agent.events import Approval
from snakegate.errors import UserError
from snakegate.provenance.origin import OriginError, origin_fields
from snakegate.config.read import read_run_config


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Approving:
    """Mixin: expects `draft`, `_approval`, `backend`, `settings`, `registry`, `conversation_id`, `audit`
    and `_log` from Conversation."""

    def approve(self, approved_by: str) -> Approval:
        """Mint the approval for the current draft. Called by the UI when the human approves, never by a model."""
        if self.draft is None:
            raise UserError("there is no draft to approve yet: the model must first validate a parameter set")
        if not isinstance(approved_by, str) or not approved_by.strip():
            raise UserError(f"approved_by must name the person approving (got {approved_by!r})")
        approved_at = _utc_now()
        self._log("approval", invocation_id=self.draft.invocation_id, approved_by=approved_by.strip(),
                  approved_at=approved_at, draft=str(self.draft.config_path))
        digest = self.audit.digest() if self.audit is not None else None
        self._approval = Approval(invocation_id=self.draft.invocation_id, approved_by=approved_by.strip(),
                                  approved_at=approved_at, token=secrets.token_hex(32), transcript_sha256=digest)
        return self._approval

    def _origin(self, approval, answered_by: str | None) -> dict:
        """Where a run this conversation approved came from (a draft's or a refinement's approval); UserError
        when it cannot be recorded."""
        try:
            return origin_fields(model=self.backend.model, proposed_by_backend=self.backend.name,
                                 approved_by=approval.approved_by, approved_at=approval.approved_at,
                                 conversation_id=self.conversation_id, answered_by=answered_by,
                                 transcript_sha256=approval.transcript_sha256)
        except OriginError as exc:
            raise UserError(f"the run's origin cannot be recorded: {exc}") from None

    def execute(self, approval: Approval, options: runner.RunOptions | None = None,
                on_progress: Callable[[dict], None] | None = None,
                cancel: threading.Event | None = None) -> runner.RunOutcome:
        """Run the current draft through the runner (which gates again). UserError on any approval mismatch.
        Setting `cancel` stops the run (recorded `cancelled`), as the UI's cancel key does."""
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
        options = options or runner.RunOptions()
        extra = {"origin": self._origin(approval, draft.answered_by)}
        if draft.fork is not None:
            parent = self.settings.runs_dir / draft.fork.parent_run
            options.forcerun, options.seed_from = list(draft.fork.changed_rules), parent
            extra.update(parent_run=draft.fork.parent_run, parent_invocation_id=draft.fork.parent_invocation_id,
                         fork_changes=draft.fork.changes)
            if draft.fork.recovery_of:  # a recovery: the failing check (or the failure) it answers
                extra["recovery_of"] = dict(draft.fork.recovery_of)
        self._approval = None  # one approval, one run
        outcome = runner.execute(self.registry, self.settings, invocation, options, on_progress=on_progress,
                                 extra_record=extra, cancel=cancel)
        self.ran(outcome.run_id)  # its summary enters the conversation (reporting.py)
        self._log("run", run_id=outcome.run_id, status=outcome.status, invocation_id=draft.invocation_id)
        return outcome
