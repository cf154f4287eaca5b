"""The same action call made again within one turn: answered without running it, and the turn stopped when it
would only go round in circles.

A refused call made again would be refused the same way, so the turn stops at once and the researcher is asked
(STUCK). A call that succeeded, made again, gets a note pointing at its first result; made a third time (a
small model searching the same words, listing runs again and again up to the step limit), the turn stops and
the researcher is asked (CIRCLING). Pure: builds the outcome
and the sentence said to the researcher; it never runs an action, writes or sends anything.
"""

from __future__ import annotations

from snakegate.agent.actions.platform import Outcome, error_result

STUCK = ("The model asked for {name} again with the same arguments, and it was refused the same way: {why}. "
         "I stopped here instead of letting it try again. Tell me what to change, or rephrase the request.")
CIRCLING = ("The model asked for {name} with the same arguments {times} times in a row and got the same answer each "
            "time ({summary}). I stopped here instead of letting it go round in circles. Tell me what to do next, or "
            "rephrase the request.")
MAX_SAME_CALLS = 2  # a successful call made this many times is answered with a note; once more stops the turn


def refusal_words(outcome: Outcome) -> str:
    """Why an action was refused, in words: its error, or the gate's first findings with their hints."""
    error = outcome.result.get("error")
    if isinstance(error, dict):
        return str(error.get("message")) + (f" ({error['hint']})" if error.get("hint") else "")
    found = [e for e in outcome.result.get("errors") or [] if isinstance(e, dict)]
    if found:
        return "; ".join(f"{e.get('path')}: {e.get('message')}" + (f" ({e['hint']})" if e.get("hint") else "")
                         for e in found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
    return outcome.summary


def answer_repeat(name: str, summary: str, refusal: str | None, times: int) -> tuple[Outcome, str | None]:
    """The outcome of a call already made `times` times in this turn (its first `summary`, and `refusal` in
    words if it was refused), and what to say to the researcher when the turn must stop (None: the model may
    go on)."""
    if refusal is None and times >= MAX_SAME_CALLS:
        stop = CIRCLING.format(name=name, times=times + 1, summary=summary)
        return Outcome(name, {}, error_result("repeated_call", stop), False,
                       f"{name}: the same call {times + 1} times, not run again — the turn stops here"), stop
    if refusal is not None:
        stop = STUCK.format(name=name, why=refusal)
        return Outcome(name, {}, error_result("repeated_refusal", stop), False,
                       f"{name}: refused again with the same arguments — {refusal}"), stop
    note = (f"{name} was already called with these arguments in this turn (result: {summary}); it was not run "
            "again. Use that result and take the next step, or ask the researcher.")
    return Outcome(name, {}, {"note": note}, True, f"{name}: repeated call, answered with a note"), None
