"""A reply cut at the token limit, or a model going round in circles: the turn falls back to what was stated.

A small model under a grammar still writes until `max_tokens` now and then (a column list repeated, a run id
of digits, one sentence over and over); the cut reply is half a step and is never kept. `CutReplies` is the
controller's mixin that decides what the turn becomes: when a workflow is in reach (the one being filled, or
the registry search's clear choice for the researcher's words) and their words state something for it
(prefill.py), the controller itself asks the gate with exactly that (a validate_params with no values of the
model's own: the prefill fills it, faithful.py compares), and the turn ends with the draft ready to review or
the gate's refusal said in words and a question. Otherwise the turn is undone as before, with the notice
that says so (`CUT`). A turn stopped because the model repeated a call that was not refused (repeats.py) before
any draft falls back the same way (`_after_stuck`); a repeated refusal is said as it is. It never keeps a cut reply, never runs anything and never drafts a value
the researcher did not state.
"""

from __future__ import annotations

import json

from snakegate.agent.backend import Reply, ToolCall
from snakegate.agent.events import AssistantSaid, Event
from snakegate.agent.prompt import clear_choice

CUT = ("the model's reply was cut off at the token limit (max_tokens={n}), so it was dropped with the rest of this "
       "turn and will not be sent to the model again; send your message again (asking for a shorter answer helps), "
       "or raise [agent] max_tokens or --max-tokens")
CUT_DRAFTED = ("The model's reply was cut off at the token limit (max_tokens={n}) and was dropped; I drafted {wf} "
               "from what you stated ({names}) instead. Review the draft and approve it, or tell me what to change.")
CUT_REFUSED = ("The model's reply was cut off at the token limit (max_tokens={n}) and was dropped; I checked {wf} "
               "with what you stated ({names}) instead, and the gate refused it: {why} What should I change?")
STUCK_DRAFTED = ("The model went round in circles (the same call again and again), so I stopped it and drafted {wf} "
                 "from what you stated ({names}). Review the draft and approve it, or tell me what to change.")
STUCK_REFUSED = ("The model went round in circles (the same call again and again), so I stopped it and checked {wf} "
                 "with what you stated ({names}); the gate refused it: {why} What should I change?")
MAX_REASONS = 3   # the gate's messages said back; the draft panel and the next turn have the rest


class CutReplies:
    """The mixin; the Conversation gives it messages, backend, registry, draft, described and the turn helpers."""

    def _after_cut(self, turn) -> list[Event]:
        """The turn after a reply cut at the limit: drafted or refused from what was stated, or undone."""
        n = getattr(self.backend, "max_tokens", "?")
        said = self._from_stated(turn, CUT_DRAFTED.format(n=n, wf="{wf}", names="{names}"),
                                 CUT_REFUSED.format(n=n, wf="{wf}", names="{names}", why="{why}"))
        return self._close(turn) if said else self._failed(turn, CUT.format(n=n), True)

    def _after_stuck(self, turn, stuck: str) -> list[Event]:
        """A turn the model went round in circles in (repeats.py), with no draft yet: what was stated is drafted
        or refused instead; else the stop is said as it is."""
        said = None
        # a refused call repeated is already said with its refusal (repeats.py): the researcher is asked that
        if self.draft is turn.draft and all(refusal is None for _, refusal, _ in turn.calls.values()):
            said = self._from_stated(turn, STUCK_DRAFTED, STUCK_REFUSED)
        if said is None:
            self.messages.append({"role": "assistant", "content": stuck})
            turn.emit(AssistantSaid(stuck))
        return self._close(turn)

    def _from_stated(self, turn, drafted: str, refused: str) -> str | None:
        """Validate the workflow in reach with what the researcher stated, and say the outcome (`drafted` or
        `refused`, formatted with wf, names and why); None when no workflow is in reach or nothing was stated."""
        wf = self._workflow_in_reach(turn)
        stated = self._request_shape(wf).prefill if wf is not None else {}
        if wf is None or not stated:
            return None
        self._log("stated_fallback", workflow=wf.id, stated=sorted(stated))
        before = self.draft
        call = ToolCall(id=f"call_stated_{len(self.messages)}", name="validate_params",
                        arguments={"workflow": wf.id, "params": {}})
        self._run_tool_calls(Reply(tool_calls=(call,)), turn)
        names = ", ".join(sorted(stated))
        if self.draft is not None and self.draft is not before:
            said = drafted.format(wf=wf.id, names=names)
        else:
            said = refused.format(wf=wf.id, names=names, why=self._last_refusal())
        self.messages.append({"role": "assistant", "content": said})
        turn.emit(AssistantSaid(said))
        return said

    def _workflow_in_reach(self, turn):
        """The workflow being filled, else the one the registry's search clearly picks for the researcher's words."""
        if getattr(self.backend, "local", False):
            return None
        wf_id = self.described[0] if self.described else clear_choice(self.registry, self._researcher_text()) \
            or clear_choice(self.registry, turn.text)
        return self.registry.get(wf_id) if wf_id else None

    def _last_refusal(self) -> str:
        """The gate's messages in the last tool result, one sentence each."""
        try:
            result = json.loads(self.messages[-1].get("content") or "{}")
        except (TypeError, ValueError):
            result = {}
        errors = result.get("errors") or ([result["error"]] if isinstance(result.get("error"), dict) else [])
        said = [str(e.get("message")).rstrip(".") + "." for e in errors[:MAX_REASONS] if isinstance(e, dict)
                and e.get("message")]
        return " ".join(said) or "it did not pass."
