"""The offline guided dialogue: a deterministic Backend for `snakegate chat` when no model is configured.

Owns `GuidedBackend`: it reads the researcher's latest message and the results
of the platform actions it asked for (the `role: tool` messages), and answers
with either one action call or a short text. This module is the dialogue's
top level: the Backend protocol, the fold over the conversation, the commands
(`list`, `help`, `restart`, `runs`, `show RUN`, `fork RUN name=value`, what
"approve" means) and choosing a workflow through `search_workflows` /
`describe_workflow`; filling its parameters is fill.py, a chain of workflows
as a plan plan.py, a bounded refinement ("try NAME V1 then V2 until CHECK") refine.py, a finished run's
summary, follow-ups in the researcher's words, recoveries and comparisons follow.py, reading answers
parse.py, wording text.py. Its state is a fold over the
conversation's inputs (user texts and tool results), so the same conversation
always gives the same replies, and a history it did not see grow is replayed
from the start.

It never touches the network, never reads or writes a data file, never runs
or approves anything and never decides validity itself beyond checking an
answer against the parameter's declared type, values and range: only the
platform actions (and so the gate) do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from snakegate.agent.backend import BackendError, Reply, ToolCall
from snakegate.agent.guided.fill import Filling
from snakegate.agent.guided.follow import COMPARE, Following
from snakegate.agent.guided.parse import KEEP_DEFAULT, follow_up, fork_command, keywords, unquote
from snakegate.agent.guided.plan import Planning
from snakegate.agent.guided.refine import RefineTalk
from snakegate.agent.guided.text import (
    APPROVE, DRAFT_USED, GREETING, HELP, NO_DRAFT_TO_APPROVE, error_text, explain_text, fork_text, numbered_workflows, runs_text,
)
from snakegate.agent.prompt import CLEAR_RATIO
from snakegate.agent.redact import MASKED_NOTE_RE
from snakegate.agent.results import NOTE_RE

LIST_LIMIT = 50    # search_workflows' own maximum: `list` shows every workflow of a normal registry
APPROVE_WORDS = {"approve", "approve it", "approved", "run it", "execute", "execute it", "run the draft"}


@dataclass
class _State:
    """Everything the dialogue knows, rebuilt deterministically from the conversation's inputs."""

    mode: str = "start"                 # start | choose (a numbered workflow list is shown) | ask | review | plan
    listed: list[str] = field(default_factory=list)          # workflow ids of the last numbered list
    workflow: dict | None = None                               # the describe_workflow result being filled
    params: dict[str, Any] = field(default_factory=dict)      # answers so far (defaults are left out)
    pending: list[str] = field(default_factory=list)          # questions still to ask; [0] is the current one
    asked: list[str] = field(default_factory=list)            # answered questions, oldest first (for `back`)
    files: list[str] | None = None                            # inspect_data("") file paths, once per conversation
    columns: dict[str, list[str] | None] = field(default_factory=dict)  # table path -> its columns
    folders: dict[str, list[str]] = field(default_factory=dict)  # param -> files of a folder typed as its value
    checks: list[tuple[str, str]] = field(default_factory=list)  # (param, path) from the request, to inspect
    request_text: str = ""              # the request that chose the workflow (values are taken from it)
    fix: dict | None = None             # {"param", "choices"} while re-asking after a gate refusal
    suggested: tuple[str, Any] | None = None  # (param, value) a "did you mean …?" offered: `yes` takes it
    taken: dict[str, str] = field(default_factory=dict)  # param -> value shown, as read from the request
    cued: set[str] = field(default_factory=set)  # file params a file named in words was tried for ("my penguins")
    drafted: bool = False               # a draft passed the gate in this conversation
    used: bool = False                  # that draft was approved and ran: nothing is ready until a new one passes
    calls: dict[str, tuple[str, dict]] = field(default_factory=dict)  # open tool call id -> (purpose, context)
    counter: int = 0                    # tool calls made so far; ids are g1, g2, ...
    notes: list[str] = field(default_factory=list)            # text gathered during this turn's tool calls
    # a plan (guided/plan.py): its steps ({name, workflow: describe result, params, questions, pending, text})
    plan: list[dict] = field(default_factory=list)
    plan_parts: list[str] = field(default_factory=list)       # parts of the request still to find a workflow for
    plan_at: int | None = None          # the step being filled
    plan_made: bool = False             # a plan action ran: the conversation holds the plan (later: add/replace)
    adding: str | None = None           # the step a follow-up adds (add_step)
    # after runs (follow.py): the runs whose summary arrived, oldest first; their summaries; workflows'
    # parameter tables by id; the readings of a follow-up offered as numbered options
    runs: list[str] = field(default_factory=list)
    summaries: dict[str, dict] = field(default_factory=dict)
    tables: dict[str, list[dict]] = field(default_factory=dict)
    choosing: dict | None = None


class GuidedBackend(Following, Planning, Filling, RefineTalk):
    """A deterministic dialogue that drives the platform actions exactly as a model would."""

    name = "guided"
    model = "guided-dialogue"
    local = True  # runs in this process: it is shown every result whole (no trimming for a context window)
    greeting = GREETING

    def __init__(self) -> None:
        self._state = _State()
        self._seen: list[tuple] = []
        self._reply = Reply(text=GREETING)
        self._tools: set[str] = set()

    # ---- the Backend protocol ------------------------------------------------------------------
    def request(self, messages: list[dict], tools: list[dict]) -> Reply:
        self._tools = {t.get("function", {}).get("name") for t in tools or [] if isinstance(t, dict)}
        inputs = _inputs(messages)
        if inputs[: len(self._seen)] != self._seen:
            # Not the history this instance answered (the controller dropped a failed turn, or this is a
            # fresh backend for an old conversation): replay it from the start.
            self._state, self._seen = _State(), []
        try:
            for item in inputs[len(self._seen):]:
                self._reply = self._user(item[1]) if item[0] == "user" else self._tool(item[1], item[2])
        except BackendError:
            self._state, self._seen = _State(), []  # half-folded state must not survive: replay next time
            raise
        self._seen = inputs
        return self._reply

    # ---- turning inputs into replies -----------------------------------------------------------
    def _user(self, text: str) -> Reply:
        st = self._state
        st.notes, st.calls = [], {}  # a new message abandons any action still waiting for its result
        masked = MASKED_NOTE_RE.match(text.strip())
        if masked:
            return self._masked(masked.group(1))
        if NOTE_RE.match(text.strip()):  # a run this conversation started ended: its summary
            return self._run_note(text.strip())
        text = unquote(text.strip())
        word = text.lower().rstrip(".!")
        choosing, st.choosing = st.choosing, None  # a numbered reading of a follow-up is open for one answer
        if choosing and text.isdigit():
            st.choosing = choosing
            return self._choose_option(int(text))
        if word in ("help", "?"):
            return self._say(HELP + self._reminder())
        if word == "list":
            return self._call("search_workflows", {"query": "", "limit": LIST_LIMIT}, "list")
        if word in ("restart", "start over"):
            self._state = _State(counter=st.counter, files=st.files, columns=st.columns, drafted=st.drafted,
                                 used=st.used)
            return self._say("Starting over. Describe what you want to do, or type `list` to see the workflows.")
        if word == "show":
            return self._say(self._plan_show() if st.plan else self._show())
        if word == "back":
            return self._back()
        if word == "done":
            return self._plan_done() if st.plan and st.mode != "choose" else self._done()
        removal = re.match(r"^remove\s+(?:step\s+)?`?([a-z][a-z0-9_]*)`?$", text, re.I)
        if removal and st.plan:
            return self._plan_remove(removal.group(1))
        if word in APPROVE_WORDS:
            return self._say((DRAFT_USED if st.used else APPROVE if st.drafted else NO_DRAFT_TO_APPROVE)
                             + self._reminder())
        if word == "runs":
            return self._call("list_runs", {"limit": 10}, "runs")
        command = re.match(r"^(show|fork)\s+(\S.*)$", text, re.I)
        if command:
            return self._run_command(command.group(1).lower(), command.group(2).strip())
        refined = self._maybe_refine(text)  # "try NAME V1 then V2 until CHECK" (guided/refine.py)
        if refined is not None:
            return refined
        if re.match(r"set(\s|$)", word):
            return self._plan_set(text[3:].strip()) or self._set(text[3:].strip())
        if st.mode == "ask" and st.pending:
            return self._answer(text)
        more = follow_up(text)
        if more and st.mode == "review" and (st.plan or st.workflow is not None):
            return self._add_to_plan(more)
        if re.match(r"^compare\b", word) or (st.runs and COMPARE.search(text)):
            compared = self._compare(text)
            if compared is not None:
                return compared
        followed = self._follow(text)  # "try leave-one-out instead": a fork of the last run with that change
        if followed is not None:
            return followed
        if st.mode == "choose" and st.workflow is None and word in KEEP_DEFAULT - {""}:
            return self._say("Pick a workflow by number or id first." + self._reminder())
        return self._pick_or_search(text)

    def _tool(self, call_id: str, content: str) -> Reply:
        st = self._state
        if call_id not in st.calls:
            return self._reply  # not a call this dialogue is waiting for: nothing changes
        purpose, ctx = st.calls.pop(call_id)
        try:
            result = json.loads(content)
        except (TypeError, ValueError):
            result = {"error": {"code": "bad_result", "message": f"the {purpose} result is not JSON", "hint": None}}
        if not isinstance(result, dict):
            result = {"error": {"code": "bad_result", "message": f"the {purpose} result is not an object",
                                "hint": None}}
        handler = {"list": self._on_list, "search": self._on_search, "describe": self._on_describe,
                   "files": self._on_files, "columns": self._on_columns, "validate": self._on_validate,
                   "check_path": self._on_check_path, "runs": self._on_runs, "explain": self._on_explain,
                   "fork": self._on_fork, "plan_search": self._on_plan_search,
                   "run_summary": self._on_run_summary, "recover": self._on_recover, "follow_run": self._on_follow_run,
                   "follow_describe": self._on_follow_describe, "compare": self._on_compare,
                   "plan_describe": self._on_plan_describe, "plan_result": self._on_plan_result,
                   "refine": self._on_refine}[purpose]
        return handler(result, ctx)

    # ---- replies -------------------------------------------------------------------------------
    def _say(self, text: str, secret: str | None = None) -> Reply:
        st = self._state
        out = "\n\n".join([*st.notes, text] if text else st.notes)
        st.notes = []
        # The controller treats an empty reply as a failure: always say something.
        return Reply(text=out or "Describe what you want to do, or type `list` or `help`.", asks_secret=secret)

    def _call(self, name: str, arguments: dict, purpose: str, context: dict | None = None) -> Reply:
        if self._tools and name not in self._tools:
            raise BackendError(f"the guided dialogue needs the platform action `{name}`, "
                               "which this conversation does not offer")
        st = self._state
        st.counter += 1
        call_id = f"g{st.counter}"
        st.calls[call_id] = (purpose, context or {})
        return Reply(tool_calls=(ToolCall(id=call_id, name=name, arguments=arguments),))

    def _reminder(self) -> str:
        """A pointer back to the open question, so a command never loses the researcher's place."""
        st = self._state
        if st.mode == "ask" and st.pending:
            return f"\n\n(Current question: `{st.pending[0]}`.)"
        return ""

    # ---- choosing a workflow -------------------------------------------------------------------
    def _pick_or_search(self, text: str) -> Reply:
        st = self._state
        choosing_step = st.mode == "choose" and bool(st.plan_parts)  # a plan step whose search was not clear
        if text.isdigit() and st.listed:
            n = int(text)
            if 1 <= n <= len(st.listed):
                if choosing_step:
                    return self._pick_step_workflow(st.listed[n - 1])
                return self._describe(st.listed[n - 1], st.request_text)
            return self._say(f"Pick a number from 1 to {len(st.listed)}, or an id.")
        if text in st.listed:
            return self._pick_step_workflow(text) if choosing_step else self._describe(text)
        if not text:
            return self._say("Describe what you want to do, or type `list` to see the workflows.")
        chained = self._chain(text)  # "profile my table, then benchmark a classifier on the cleaned result"
        if chained is not None:
            return chained
        return self._call("search_workflows", {"query": keywords(text), "limit": 5}, "search", {"text": text})

    def _describe(self, wf_id: str, text: str = "") -> Reply:
        return self._call("describe_workflow", {"workflow": wf_id}, "describe", {"text": text} if text else None)

    def _on_list(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result))
        matches = result.get("matches") or []
        if not matches:
            return self._say("This registry has no workflows yet.")
        # A number now picks from this list, even in the middle of a workflow's questions.
        back = f" (`back` returns to `{st.pending[0]}`)" if st.mode == "ask" and st.pending else ""
        st.listed, st.mode = [m["id"] for m in matches], "choose"
        return self._say("\n".join(["Workflows in this registry:", numbered_workflows(matches),
                                    f"Pick one by number or id{back}."]))

    def _on_search(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result))
        matches = result.get("matches") or []
        wanted = ctx["text"].strip().lower()
        exact = [m for m in matches if m["id"].lower() == wanted]
        if exact:
            return self._describe(exact[0]["id"])
        if not matches:
            if st.mode == "review":
                ready = "" if st.used else " Your draft is still ready to approve;"
                return self._say(f"No workflow matches “{ctx['text']}”.{ready} "
                                 "Type `list` to see the workflows or `help` for the commands.")
            st.notes.append(f"No workflow matches “{ctx['text']}”.")
            return self._call("search_workflows", {"query": "", "limit": LIST_LIMIT}, "list")
        scores = [float(m.get("score") or 0) for m in matches]
        if len(matches) == 1 or scores[0] >= CLEAR_RATIO * scores[1]:
            return self._describe(matches[0]["id"], ctx["text"])
        bare = keywords(ctx["text"], folders=False)
        if not ctx.get("bare") and bare != keywords(ctx["text"]):  # the paths' folders may have blurred it
            return self._call("search_workflows", {"query": bare, "limit": 5}, "search", {**ctx, "bare": True})
        st.listed, st.request_text = [m["id"] for m in matches], ctx["text"]
        st.mode = "choose"
        return self._say("\n".join([f"Several workflows match “{ctx['text']}”:", numbered_workflows(matches),
                                    "Pick one by number or id."]))

    def _on_files(self, result: dict, ctx: dict) -> Reply:
        entries = (result.get("entries") or []) if "error" not in result else []
        self._state.files = [e["path"] for e in entries if e.get("kind", "file") == "file" and "path" in e]
        return self._ask() if self._state.mode == "ask" and self._state.pending else self._say("")

    def _on_columns(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        columns = result.get("columns") if "error" not in result else None
        st.columns[ctx["table"]] = list(columns) if isinstance(columns, list) else None
        if "error" in result:
            st.notes.append(f"I could not read the columns of `{ctx['table']}`: {result['error'].get('message')}")
        return self._ask() if st.mode == "ask" and st.pending else self._say("")

    # ---- runs ----------------------------------------------------------------------------------
    def _run_command(self, verb: str, rest: str) -> Reply:
        if verb == "show":
            return self._call("explain_run", {"run_id": rest.split()[0]}, "explain")
        parsed = fork_command(rest)
        if parsed is None:
            return self._say("Write it as `fork RUN name=value` (several `name=value` may follow), e.g. "
                             "`fork latest missing_strategy=fill_mean`." + self._reminder())
        run_id, changes = parsed
        return self._call("fork_run", {"run_id": run_id, "changes": changes}, "fork")

    def _on_runs(self, result: dict, ctx: dict) -> Reply:
        return self._say((error_text(result) if "error" in result else runs_text(result)) + self._reminder())

    def _on_explain(self, result: dict, ctx: dict) -> Reply:
        return self._say((error_text(result) if "error" in result else explain_text(result)) + self._reminder())

    def _on_fork(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result) + self._reminder())
        if not result.get("ok"):
            errors = result.get("errors") or []
            lines = ["The gate refused the fork:"] + [f"- {e.get('message')}" + (f" (fix: {e['hint']})"
                                                                                 if e.get("hint") else "")
                                                      for e in errors]
            return self._say("\n".join(lines) + self._reminder())
        st.drafted, st.used, st.mode = True, False, "review"
        return self._say(fork_text(result))


# ---- the conversation's inputs -------------------------------------------------------------------
def _inputs(messages: list[dict]) -> list[tuple]:
    """What the dialogue reacts to: user texts and tool results, in order (its own turns are outputs)."""
    out: list[tuple] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "user":
            content = m.get("content")
            out.append(("user", content if isinstance(content, str) else _text_of(content)))
        elif m.get("role") == "tool":
            out.append(("tool", str(m.get("tool_call_id")), m.get("content") if isinstance(m.get("content"), str)
                        else json.dumps(m.get("content"), sort_keys=True)))
    return out


def _text_of(content: Any) -> str:
    """OpenAI content parts ([{"type": "text", "text": ...}]) -> plain text."""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
