"""The guided dialogue after a run: its summary read back, a recovery proposed, follow-ups as forks, comparisons.

A mixin of `GuidedBackend` (dialogue.py). When a run the conversation started ends, its note arrives
(agent/results.py `NOTE_RE`): the dialogue asks `summarize_run` for the run and reads it back (verdict,
key numbers, first rows). After a failing check or a failed run it names the evidence (agent/recovery.py)
and, when the run itself suggests the value (pump-probe's suggested background ROI), proposes exactly that
through `recover_run`; otherwise it asks what to change, naming the params the workflow points at.

A follow-up in the researcher's words ("try leave-one-out instead of 5-fold", "use fill_mean instead",
"same with Cr below 10") about the last run (or a run it names by id) is read through the contract
(followups.py) into a fork draft with only that change, through `fork_run` (or `recover_run` when the run
failed or has a failing check, so the fork is recorded as its recovery); the reply says how each word was
read. Words that fit several changes are asked about, numbered; words that fit none are said to, never
searched as a new request. Before any run, the same words change the draft and validate it again.
`compare` (or "how does it compare?") compares the last run with the one it was forked from.
It never decides validity (the gate does) and never approves or runs anything.
"""

from __future__ import annotations

import re

from snakegate.agent import recovery
from snakegate.agent.backend import Reply
from snakegate.agent.guided.follow_text import (
    after_run_hint, ask_what_to_change, compare_text, evidence_text, options_text, read_as_text, recovery_text,
    run_summary_text,
)
from snakegate.agent.guided.followups import is_follow_up, read_changes
from snakegate.agent.guided.parse import is_bounds
from snakegate.agent.guided.text import error_text
from snakegate.agent.results import NOTE_RE

RUN_ID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{8}(?:\.\d+)?\b")
NOTE_ALL = re.compile(NOTE_RE.pattern, re.M)
COMPARE = re.compile(r"\b(compare|comparison|differ|difference|differences)\b", re.I)


class Following:
    """Mixin: expects `self._state`, `self._say`, `self._call`, `self._reminder`, `self._validate` and
    `self._on_fork` from GuidedBackend."""

    # ---- a run ended -----------------------------------------------------------------------------
    def _run_note(self, text: str) -> Reply:
        st = self._state
        ids = NOTE_ALL.findall(text)
        st.runs += [i for i in ids if i not in st.runs]
        st.used = True  # one approval, one run: the draft that ran is no longer ready
        return self._call("summarize_run", {"run_id": ids[-1]}, "run_summary", {"also": ids[:-1]})

    def _on_run_summary(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        st.summaries[result["run_id"]] = result
        if ctx.get("also"):
            st.notes.append("Also ended: " + ", ".join(f"`{i}` (`show RUN` explains it)" for i in ctx["also"]))
        st.notes.append(run_summary_text(result))
        if st.mode in ("start", "choose"):
            st.mode = "review"
        found = recovery.evidence(result)
        suggested = next((e for e in found if e.suggested), None)
        if suggested is not None:  # the run names the change itself: propose exactly that, as its recovery
            return self._call("recover_run", {"run_id": result["run_id"], "check": suggested.check}, "recover")
        if found:
            ev = found[0].as_json()
            return self._say(evidence_text(ev) + "\n" + ask_what_to_change(ev, result.get("workflow"))
                             + self._reminder())
        return self._say(after_run_hint(result) + self._reminder())

    def _on_recover(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        if not result.get("ok"):
            if result.get("evidence"):
                st.notes.append(evidence_text(result))
            return self._on_fork(result, ctx)
        st.drafted, st.used, st.mode = True, False, "review"
        return self._say(recovery_text(result))

    # ---- follow-ups --------------------------------------------------------------------------------
    def _follow(self, text: str) -> Reply | None:
        """A follow-up about a run (or, before any run, the draft), or None when `text` is not one."""
        st = self._state
        named = RUN_ID.findall(text)
        run = named[-1] if named else (st.runs[-1] if st.runs else None)
        if run is None:
            return self._change_draft(text)
        summary = st.summaries.get(run)
        table = st.tables.get(summary.get("workflow")) if summary else None
        if not named and not is_follow_up(text) and not (table and read_changes(
                text, table, summary.get("params"), self._known_columns(table, summary.get("params"))).found):
            return None
        if summary is None:
            return self._call("summarize_run", {"run_id": run}, "follow_run", {"text": text})
        return self._follow_with(text, summary)

    def _on_follow_run(self, result: dict, ctx: dict) -> Reply:
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        self._state.summaries[result["run_id"]] = result
        return self._follow_with(ctx["text"], result)

    def _follow_with(self, text: str, summary: dict) -> Reply:
        table = self._state.tables.get(summary.get("workflow"))
        if table is None:
            return self._call("describe_workflow", {"workflow": summary.get("workflow")}, "follow_describe",
                              {"text": text, "run": summary["run_id"]})
        return self._apply(text, summary, table)

    def _on_follow_describe(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        st.tables[result["id"]] = result.get("params") or []
        return self._apply(ctx["text"], st.summaries[ctx["run"]], st.tables[result["id"]])

    def _apply(self, text: str, summary: dict, table: list[dict]) -> Reply:
        st = self._state
        current = summary.get("params") or {}
        reading = read_changes(text, table, current, self._known_columns(table, current))
        run = summary["run_id"]
        if reading.options:
            st.choosing = {"run": run, "options": reading.options}
            return self._say(options_text(reading.question, reading.options))
        if not reading.found:
            names = ", ".join(f"`{p['name']}`" for p in table if not p.get("sensitive"))
            return self._say(f"I could not tell which parameter of `{summary.get('workflow')}` to change from "
                             f"“{text}”. Its parameters: {names}. Say the value you want (e.g. *try leave-one-out "
                             f"instead*), or type `fork {run} name=value`." + self._reminder())
        changes = {k: v for k, v in reading.changes.items() if current.get(k) != v}
        if not changes:
            same = ", ".join(f"`{k}` = `{v}`" for k, v in reading.changes.items())
            return self._say(f"Run `{run}` already had {same}: nothing to change. Say another value, or "
                             "`compare` two runs." + self._reminder())
        said = read_as_text(reading.read_as, changes)
        if said:
            st.notes.append(said)
        return self._fork(summary, changes)

    def _fork(self, summary: dict, changes: dict) -> Reply:
        """A fork of the run with `changes`; of a run that failed or has a failing check, as its recovery."""
        run = summary["run_id"]
        if recovery.evidence(summary):
            return self._call("recover_run", {"run_id": run, "changes": changes}, "recover")
        return self._call("fork_run", {"run_id": run, "changes": changes}, "fork")

    def _choose_option(self, n: int) -> Reply:
        st = self._state
        choosing, st.choosing = st.choosing, None
        options = choosing["options"]
        if not 1 <= n <= len(options):
            st.choosing = choosing
            return self._say(f"Pick a number from 1 to {len(options)}.")
        changes = options[n - 1]
        if choosing["run"] is None:  # a change to the draft
            st.params.update(changes)
            return self._validate()
        return self._fork(st.summaries[choosing["run"]], changes)

    def _change_draft(self, text: str) -> Reply | None:
        """Before any run: the same words change the draft's params and validate them again."""
        st = self._state
        if st.mode != "review" or st.workflow is None or not st.drafted or st.plan:
            return None
        table = st.workflow.get("params") or []
        current = {p["name"]: st.params.get(p["name"], p.get("default")) for p in table}
        reading = read_changes(text, table, current, self._known_columns(table, current))
        if not reading.found:
            return None if not is_follow_up(text) else self._say(
                f"I could not tell which parameter of `{st.workflow['id']}` to change from “{text}”; "
                "`set name=value` changes one.")
        if reading.options:
            st.choosing = {"run": None, "options": reading.options}
            return self._say(options_text(reading.question, reading.options))
        said = read_as_text(reading.read_as, reading.changes)
        if said:
            st.notes.append(said)
        st.params.update(reading.changes)
        return self._validate()

    def _known_columns(self, table: list[dict], current: dict) -> list[str]:
        """Column names this conversation knows: tables it inspected, column params' values, bounds' keys."""
        found: list[str] = [c for cols in self._state.columns.values() for c in cols or []]
        for p in table:
            value = (current or {}).get(p["name"])
            if p.get("column_of"):
                found += value if isinstance(value, list) else [value] if isinstance(value, str) else []
            elif is_bounds(p) and isinstance(value, dict):
                found += list(value)
        return [c for c in dict.fromkeys(found) if isinstance(c, str)]

    # ---- comparing -----------------------------------------------------------------------------------
    def _compare(self, text: str) -> Reply | None:
        st = self._state
        named = RUN_ID.findall(text)
        if len(named) >= 2:
            a, b = named[-2], named[-1]
        elif st.runs:
            b = named[-1] if named else st.runs[-1]
            parent = (st.summaries.get(b) or {}).get("fork_of")
            earlier = [r for r in st.runs if r != b]
            a = parent or (earlier[-1] if earlier else None)
            if a is None:
                return self._say(f"There is only run `{b}` so far; name two runs: `compare RUN RUN`.")
        else:
            return None
        return self._call("compare_runs", {"a": a, "b": b}, "compare")

    def _on_compare(self, result: dict, ctx: dict) -> Reply:
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        return self._say(compare_text(result) + self._reminder())
