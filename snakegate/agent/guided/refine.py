"""The guided dialogue's bounded refinement: reading "try NAME V1 then V2 until CHECK" and asking
`propose_refinement` for it.

The grammar is small, and `help` says it:

    try NAME V1 [then|or|, V2 ...] [and NAME2 W1, W2 ...] (until WORDS | and keep the best WORDS)
        [on RUN] [budget N]

e.g. "try background_roi [20,28,8,24] then [24,32,8,24] until the background is clean", "try C 0.1, 1, 10 and
keep the best roc auc". Each value is read as YAML (as `snakegate refine --try` reads it); several names make
a grid; RUN is a run id, a unique prefix or `latest` (the default); the budget defaults to every point. The
words after `until` / `keep the best` name a check of the run's workflow: as its name ("roc auc" is
`roc_auc`), or else by the words it shares with a check's name and advice, a check failing in the run first
(the action answers an unknown name with the checks, their advice and their status in the run). What
is proposed goes to the panel whole for one approval; nothing here runs, approves or reads a file.
`RefineTalk` is a mixin of GuidedBackend (dialogue.py), hooked in at `_maybe_refine` and the "refine"
tool result.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from snakegate.agent.backend import Reply

MAX_POINTS = 16  # snakegate.agent.actions.refine.MAX_POINTS: the budget defaults to every point, up to this
_RULE = re.compile(r"^try\s+(?P<space>.+?)\s+(?:(?P<until>until)|(?:and\s+|,\s*)?keep(?:ing)?\s+the\s+best"
                   r"(?:\s+value\s+of)?)\s+(?P<rule>\S.*)$", re.I | re.S)
_ON_RUN = re.compile(r"[\s,;]+(?:on|of|from)\s+(?:run\s+)?(?P<run>latest|\d{8}T\d{4,6}Z?[-\w]*)(?=[\s,;.]|$)", re.I)
_BUDGET = re.compile(r"[\s,;]+(?:(?:with\s+a\s+)?budget\s+(?:of\s+)?(?P<a>\d+)|at\s+most\s+(?P<b>\d+)\s+runs?)"
                     r"(?=[\s,;.]|$)", re.I)
_NAME = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)\s*(?:=\s*|\s+)(?P<values>\S.*)$", re.S)
_SEPARATOR = re.compile(r"\s*(?:,|;|\bthen\b|\bor\b)\s*", re.I)
STOP_WORDS = {"the", "a", "an", "is", "are", "be", "it", "its", "of", "value", "score", "gets", "get", "until",
              "passes", "pass", "check", "verdict", "and", "to", "in", "this", "that", "one"}


@dataclass(frozen=True)
class RefineRequest:
    run: str
    vary: dict[str, list]
    rule: str            # "until" | "best"
    words: str           # what names the check, as typed
    budget: int | None

    def arguments(self, check: str) -> dict:
        points = math.prod(len(v) for v in self.vary.values())
        return {"run_id": self.run, "vary": self.vary, "budget": self.budget or min(points, MAX_POINTS),
                self.rule: check}


def _top_level(text: str, separator: re.Pattern) -> list[str]:
    """`text` split at `separator` where it is outside brackets, braces and quotes."""
    parts, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif depth == 0:
            m = separator.match(text, i)
            if m and m.end() > i:
                parts.append(text[start:i])
                start = i = m.end()
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def refine_request(text: str) -> RefineRequest | str | None:
    """The refinement a message asks for; a sentence saying what is unclear; or None when the message is no
    `try … until …` / `try … keep the best …` at all (e.g. "try leave-one-out instead")."""
    from snakegate.config.read import parse_yaml

    text, run, budget = " " + text.strip(), "latest", None
    found = _ON_RUN.search(text)  # `on RUN` and `budget N` may stand anywhere after `try`
    if found:
        run, text = found.group("run"), text[: found.start()] + text[found.end():]
    found = _BUDGET.search(text)
    if found:
        budget, text = int(next(g for g in found.groups() if g)), text[: found.start()] + text[found.end():]
    m = _RULE.match(text.strip())
    if m is None:
        return None
    rule, words = ("until" if m.group("until") else "best"), m.group("rule").strip(" .!")
    vary: dict[str, list] = {}
    for group in _top_level(m.group("space"), re.compile(r"\s+and\s+", re.I)):
        named = _NAME.match(group)
        if named is None:
            return (f"I read “{group}” as a param and its candidate values, but it is not `NAME value, value`; "
                    "e.g. `try background_roi [20,28,8,24] then [24,32,8,24] until the background is clean`.")
        values = []
        for raw in _top_level(named.group("values"), _SEPARATOR):
            value, error = parse_yaml(raw, f"the value {raw!r}")
            if error is not None:
                return f"I cannot read the value `{raw}` of `{named.group('name')}`: {error.message}"
            values.append(value)
        if not values:
            return f"`{named.group('name')}` has no candidate values; give one or more, e.g. `{group} 1, 2`."
        vary.setdefault(named.group("name").removeprefix("params."), []).extend(values)
    if not words:
        return "Say which check stops it: `until CHECK`, or `and keep the best CHECK`."
    return RefineRequest(run=run, vary=vary, rule=rule, words=words, budget=budget)


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", str(text).lower()) if w and w not in STOP_WORDS}


def check_name(words: str) -> str:
    """The words as a check name is written: "roc auc" -> "roc_auc", "the background_uniform" ->
    "background_uniform"."""
    kept = [w for w in re.split(r"[\s-]+", words.strip().lower()) if w and w not in STOP_WORDS]
    return "_".join(kept) or words.strip()


def pick_check(words: str, checks: list[dict], rule: str) -> str | None:
    """The check the words name: most words shared with its name (twice) and its advice; for `until`, a check
    failing in the run before one that does not; then the workflow's order. None when no word is shared."""
    wanted = _words(words)
    scored = []
    for n, check in enumerate(checks):
        name = str(check.get("name") or "")
        score = 2 * len(wanted & _words(name.replace("_", " "))) + len(wanted & _words(check.get("says") or ""))
        failing = rule == "until" and check.get("in_this_run") == "fail"
        if score:
            scored.append((-score, not failing, n, name))
    return min(scored)[3] if scored else None


def refinement_text(result: dict, note: str = "") -> str:
    """What the dialogue says when the whole space passed the gate: the space is on the panel, ctrl+r approves."""
    from snakegate.refine.text import values_text

    r = result.get("refinement") or {}
    stop = r.get("stop") or {}
    check = r.get("check") or {}
    rule = (f"stop at the first run that passes `{stop['until']}`" if stop.get("until") else
            f"run the budget and keep the best `{stop.get('best')}`")
    lines = [note] if note else []
    lines.append(f"The gate accepts all {len(r.get('points') or [])} points of a refinement of run "
                 f"`{r.get('parent_run')}` ({rule}, at most {(r.get('budget') or {}).get('runs')} run(s)):")
    lines += [f"{p.get('n')}. `{values_text(p.get('values') or {})}`" for p in r.get("points") or []]
    lines += [f"(left out: `{values_text(s.get('values') or {})}`, {s.get('why')})" for s in r.get("left_out") or []]
    if check.get("says"):
        lines.append(f"The check says: {check['says']}")
    lines.append("The whole refinement is in the panel: press **ctrl+r** to approve it once. Each run is a fork of "
                 "the one before; only these points can run, and ctrl+c cancels the running one.")
    return "\n".join(lines)


def checks_text(words: str, checks: list[dict]) -> str:
    listed = [f"- `{c.get('name')}` ({c.get('in_this_run')} in this run): {c.get('says') or ''}".rstrip()
              for c in checks]
    return "\n".join([f"Which check should “{words}” be? Write `until CHECK` with one of:", *listed]) if listed \
        else "This run's workflow has no checks (`evaluate:`), so no refinement can be judged."


class RefineTalk:
    """Mixin of GuidedBackend: needs `_call`, `_say`, `_reminder` and `_state`."""

    def _maybe_refine(self, text: str) -> Reply | None:
        """A `try … until …` message becomes a propose_refinement call; None for any other message."""
        request = refine_request(text)
        if request is None:
            return None
        if isinstance(request, str):
            return self._say(request + self._reminder())
        return self._call("propose_refinement", request.arguments(check_name(request.words)), "refine",
                          {"request": request})

    def _on_refine(self, result: dict, ctx: dict) -> Reply:
        from snakegate.agent.guided.text import error_text

        request: RefineRequest = ctx["request"]
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        if result.get("ok"):
            st = self._state
            st.drafted, st.used, st.mode = True, False, "review"
            note = (f"I read “{request.words}” as the check `{ctx['resolved']}`." if ctx.get("resolved") else "")
            return self._say(refinement_text(result, note))
        errors = result.get("errors") or []
        if errors and errors[0].get("code") == "unknown_check" and not ctx.get("resolved"):
            name = pick_check(request.words, result.get("checks") or [], request.rule)
            if name is not None:
                return self._call("propose_refinement", request.arguments(name), "refine",
                                  {"request": request, "resolved": name})
            return self._say(checks_text(request.words, result.get("checks") or []) + self._reminder())
        lines = ["The gate refused the refinement; nothing is on offer:"]
        lines += [f"- {e.get('path')}: {e.get('message')}" + (f" (fix: {e['hint']})" if e.get("hint") else "")
                  for e in errors]
        return self._say("\n".join(lines) + self._reminder())
