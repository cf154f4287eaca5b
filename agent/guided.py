"""The offline guided dialogue: a deterministic Backend for `snakegate chat` when no model is configured.

Owns `GuidedBackend`: it reads the researcher's latest message and the results
of the platform actions it asked for (the `role: tool` messages), and answers
with either one action call or a short question. It picks a workflow through
`search_workflows` / `describe_workflow`, asks for each parameter in schema
order (required first), offers data files and table columns found with
`inspect_data`, and hands the answers to `validate_params`; gate refusals come
back as the next question. Its state is a fold over the conversation's inputs
(user texts and tool results), so the same conversation always gives the same
replies, and a history it did not see grow is replayed from the start.

It never touches the network, never reads or writes a data file, never runs
anything and never decides validity itself beyond turning typed text into a
value of the parameter's type: only the platform actions (and so the gate) do.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from snakegate.metaschemas import artifact_types

from snakegate.agent.backend import BackendError, Reply, ToolCall

GREETING = (
    "Hi, I'm the offline guided dialogue (no language model is configured). I help you pick a workflow from "
    "this registry, ask for its parameters one by one and have the gate check them into a run config that "
    "you approve before anything runs.\n"
    "Describe what you want to do (e.g. *profile a csv table*), type `list` to see the workflows, "
    "or `help` for the commands."
)

HELP = (
    "Commands (any time):\n"
    "- `list`: show all workflows\n"
    "- `show`: the parameters so far\n"
    "- `set name=value`: change one parameter (re-validates once all are answered)\n"
    "- `back`: the previous question\n"
    "- `done`: keep the defaults for the remaining parameters and validate\n"
    "- `restart`: start over\n"
    "- `help`: this message\n"
    "Otherwise describe what you want to do, or answer the current question "
    "(`default` keeps a parameter's default)."
)

KEEP_DEFAULT = {"", "default", "skip", "-"}  # the TUI may not send an empty message, so words count too
TRUE_WORDS = {"yes", "y", "true"}
FALSE_WORDS = {"no", "n", "false"}
# Filler words only dilute the registry's term search ("I want to profile my table"), so they are dropped
# from the query; what remains is what an LLM would send.
FILLER = {
    "a", "an", "and", "are", "can", "could", "do", "for", "from", "have", "help", "how", "i", "i'd", "i'm", "in",
    "is", "it", "like", "me", "my", "need", "of", "on", "our", "please", "run", "some", "that", "the", "this",
    "to", "want", "we", "what", "which", "with", "would", "you",
}
MAX_CHOICES = 30   # longer file or column lists are cut; the researcher can still type any name
LIST_LIMIT = 50    # search_workflows' own maximum: `list` shows every workflow of a normal registry
CLEAR_RATIO = 2.0  # the best search score must be this many times the runner-up's to pick it without asking


class _Unclear(Exception):
    """An answer that does not convert to the parameter's type; the message says what was expected."""


@dataclass
class _State:
    """Everything the dialogue knows, rebuilt deterministically from the conversation's inputs."""

    mode: str = "start"                 # start | choose (a numbered workflow list is shown) | ask | review
    listed: list[str] = field(default_factory=list)          # workflow ids of the last numbered list
    workflow: dict | None = None                               # the describe_workflow result being filled
    params: dict[str, Any] = field(default_factory=dict)      # answers so far (defaults are left out)
    pending: list[str] = field(default_factory=list)          # questions still to ask; [0] is the current one
    asked: list[str] = field(default_factory=list)            # answered questions, oldest first (for `back`)
    files: list[str] | None = None                            # inspect_data("") file paths, once per conversation
    columns: dict[str, list[str] | None] = field(default_factory=dict)  # table path -> its columns
    fix: dict | None = None             # {"param", "choices"} while re-asking after a gate refusal
    calls: dict[str, tuple[str, dict]] = field(default_factory=dict)  # open tool call id -> (purpose, context)
    counter: int = 0                    # tool calls made so far; ids are g1, g2, ...
    notes: list[str] = field(default_factory=list)            # text gathered during this turn's tool calls


class GuidedBackend:
    """A deterministic dialogue that drives the platform actions exactly as a model would."""

    name = "guided"
    model = "guided-dialogue"
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
        text = _unquote(text.strip())
        word = text.lower()
        if word in ("help", "?"):
            return self._say(HELP + self._reminder())
        if word == "list":
            return self._call("search_workflows", {"query": "", "limit": LIST_LIMIT}, "list")
        if word in ("restart", "start over"):
            self._state = _State(counter=st.counter, files=st.files, columns=st.columns)
            return self._say("Starting over. Describe what you want to do, or type `list` to see the workflows.")
        if word == "show":
            return self._say(self._show())
        if word == "back":
            return self._back()
        if word == "done":
            return self._done()
        if re.match(r"set(\s|$)", word):
            return self._set(text[3:].strip())
        if st.mode == "ask" and st.pending:
            return self._answer(text)
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
                   "files": self._on_files, "columns": self._on_columns, "validate": self._on_validate}[purpose]
        return handler(result, ctx)

    # ---- replies -------------------------------------------------------------------------------
    def _say(self, text: str) -> Reply:
        st = self._state
        out = "\n\n".join([*st.notes, text] if text else st.notes)
        st.notes = []
        # The controller treats an empty reply as a failure: always say something.
        return Reply(text=out or "Describe what you want to do, or type `list` or `help`.")

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
        if text.isdigit() and st.listed:
            n = int(text)
            if 1 <= n <= len(st.listed):
                return self._describe(st.listed[n - 1])
            return self._say(f"Pick a number from 1 to {len(st.listed)}, or an id.")
        if text in st.listed:
            return self._describe(text)
        if not text:
            return self._say("Describe what you want to do, or type `list` to see the workflows.")
        return self._call("search_workflows", {"query": _keywords(text), "limit": 5}, "search", {"text": text})

    def _describe(self, wf_id: str) -> Reply:
        return self._call("describe_workflow", {"workflow": wf_id}, "describe")

    def _on_list(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(_error_text(result))
        matches = result.get("matches") or []
        if not matches:
            return self._say("This registry has no workflows yet.")
        # A number now picks from this list, even in the middle of a workflow's questions.
        back = f" (`back` returns to `{st.pending[0]}`)" if st.mode == "ask" and st.pending else ""
        st.listed, st.mode = [m["id"] for m in matches], "choose"
        return self._say("\n".join(["Workflows in this registry:", _numbered_workflows(matches),
                                    f"Pick one by number or id{back}."]))

    def _on_search(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(_error_text(result))
        matches = result.get("matches") or []
        wanted = ctx["text"].strip().lower()
        exact = [m for m in matches if m["id"].lower() == wanted]
        if exact:
            return self._describe(exact[0]["id"])
        if not matches:
            if st.mode == "review":
                return self._say(f"No workflow matches “{ctx['text']}”. Your draft is still ready to approve; "
                                 "type `list` to see the workflows or `help` for the commands.")
            st.notes.append(f"No workflow matches “{ctx['text']}”.")
            return self._call("search_workflows", {"query": "", "limit": LIST_LIMIT}, "list")
        scores = [float(m.get("score") or 0) for m in matches]
        if len(matches) == 1 or scores[0] >= CLEAR_RATIO * scores[1]:
            return self._describe(matches[0]["id"])
        st.listed = [m["id"] for m in matches]
        st.mode = "choose"
        return self._say("\n".join([f"Several workflows match “{ctx['text']}”:", _numbered_workflows(matches),
                                    "Pick one by number or id."]))

    def _on_describe(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(_error_text(result))
        params = result.get("params") or []
        required = [p["name"] for p in params if p.get("required")]
        optional = [p["name"] for p in params if not p.get("required")]
        st.workflow, st.params, st.asked, st.fix = result, {}, [], None
        st.pending = required + optional
        st.mode = "ask"
        st.notes.append(_summary(result, len(params)))
        if not st.pending:
            return self._validate()
        return self._ask()

    # ---- asking for parameters -----------------------------------------------------------------
    def _param(self, name: str) -> dict:
        return next(p for p in self._state.workflow["params"] if p["name"] == name)

    def _order(self) -> list[str]:
        params = self._state.workflow["params"]
        return [p["name"] for p in params if p.get("required")] + [p["name"] for p in params if not p.get("required")]

    def _table_of(self, p: dict) -> str | None:
        """The file path whose columns an x-column-of param chooses from, when there is one to inspect."""
        ref = p.get("column_of")
        if not ref:
            return None
        value = self._state.params.get(ref, self._param(ref).get("default") if self._has(ref) else None)
        if not isinstance(value, str) or not value or value.startswith("builtin:") or value == "<redacted>":
            return None  # a built-in dataset has no file to look at
        return value

    def _has(self, name: str) -> bool:
        return any(p["name"] == name for p in self._state.workflow["params"])

    def _ask(self) -> Reply:
        """Ask the current question, first fetching the files or columns it offers as choices."""
        st = self._state
        p = self._param(st.pending[0])
        if p.get("artifact") and st.files is None:
            return self._call("inspect_data", {"path": ""}, "files")
        table = self._table_of(p)
        if table is not None and table not in st.columns:
            return self._call("inspect_data", {"path": table}, "columns", {"table": table})
        return self._say(self._question(p))

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

    def _choices(self, p: dict) -> list:
        """The numbered choices offered for `p`: the gate's after a refusal, else enum, files or columns."""
        st = self._state
        if st.fix and st.fix["param"] == p["name"] and st.fix.get("choices"):
            return list(st.fix["choices"])
        if "enum" in p:
            return list(p["enum"])
        if p.get("artifact"):
            return list(p.get("builtins") or []) + _files_of_type(st.files or [], p["artifact"])[:MAX_CHOICES]
        table = self._table_of(p)
        if table is not None:
            return list(st.columns.get(table) or [])[:MAX_CHOICES]
        return []

    def _question(self, p: dict, brief: bool = False) -> str:
        st = self._state
        order = self._order()
        name = p["name"]
        facts = [_type_text(p)] + (["required"] if p.get("required") else [] if "default" in p else ["optional"])
        if "default" in p:
            facts.append(f"default `{_fmt(p['default'])}`")
        if "minimum" in p or "maximum" in p:
            facts.append(_range_text(p))
        lines = [f"**{order.index(name) + 1}/{len(order)} `{name}`** ({', '.join(facts)})"]
        if not brief and p.get("description"):
            lines.append(p["description"])
        if p.get("sensitive"):
            lines.append("This value is sensitive: it stays on this machine.")
        if name in st.params and not p.get("sensitive"):
            lines.append(f"Current value: `{_fmt(st.params[name])}`.")
        choices = self._choices(p)
        if choices:
            if p.get("artifact") and not (st.fix and st.fix["param"] == name):
                lines.append("Data files I can see:")
            lines.extend(f"{i}. `{_fmt(c)}`" + (" (default)" if "default" in p and c == p["default"] else "")
                         for i, c in enumerate(choices, 1))
        elif p.get("artifact"):
            lines.append("I found no matching files in the data roots; type a path inside one.")
        lines.append(_how_to_answer(p, bool(choices)))
        return "\n".join(lines)

    def _answer(self, text: str) -> Reply:
        st = self._state
        p = self._param(st.pending[0])
        try:
            keep, value = self._convert(p, text)
        except _Unclear as exc:
            return self._say(f"{exc}\n\n{self._question(p, brief=True)}")
        self._store(p, keep, value)
        self._advance(p["name"])
        return self._next()

    def _store(self, p: dict, keep_default: bool, value: Any) -> None:
        if keep_default:
            self._state.params.pop(p["name"], None)  # the gate fills the default; the draft shows it
        else:
            self._state.params[p["name"]] = value

    def _advance(self, name: str) -> None:
        """`name` is answered: record it for `back` and drop it from the questions still open."""
        st = self._state
        if name in st.asked:
            st.asked.remove(name)
        st.asked.append(name)
        st.pending = [n for n in st.pending if n != name]
        if st.fix and st.fix["param"] == name:
            st.fix = None

    def _next(self) -> Reply:
        st = self._state
        if st.pending:
            st.mode = "ask"
            return self._ask()
        return self._validate()

    def _convert(self, p: dict, text: str) -> tuple[bool, Any]:
        """(keep the default?, value) for an answer, or _Unclear naming the value and the type expected."""
        name = p["name"]
        if text.lower() in KEEP_DEFAULT:
            if p.get("required") and "default" not in p:
                raise _Unclear(f"`{name}` is required and has no default; please give a value.")
            return True, None
        return False, _typed(p, text, self._choices(p))

    # ---- commands ------------------------------------------------------------------------------
    def _back(self) -> Reply:
        st = self._state
        if st.workflow is None:
            return self._say("There is no question to go back to yet. Describe what you want to do, "
                             "or type `list`.")
        if st.mode == "choose" and st.pending:
            st.mode = "ask"  # back out of a workflow list into the open question
            return self._ask()
        current = st.pending[0] if st.pending else None
        # The open question may be in the history already (re-asked after a refusal): skip past it.
        st.asked = [n for n in st.asked if n != current]
        if not st.asked:
            st.mode = "ask"
            st.notes.append("This is the first question.")
            return self._ask()
        previous = st.asked.pop()
        st.pending = [previous] + [n for n in st.pending if n != previous]
        st.fix, st.mode = None, "ask"
        return self._ask()

    def _done(self) -> Reply:
        st = self._state
        if st.workflow is None:
            return self._say("Pick a workflow first: describe what you want to do, or type `list`.")
        st.pending, st.fix = [], None
        return self._validate()

    def _set(self, text: str) -> Reply:
        st = self._state
        if st.workflow is None:
            return self._say("Pick a workflow first; then `set name=value` changes one of its parameters.")
        m = re.match(r"^([^=\s]+)\s*=\s*(.*)$", text)
        if not m:
            return self._say("Write it as `set name=value`, e.g. `set "
                             f"{st.workflow['params'][0]['name'] if st.workflow['params'] else 'name'}=...`.")
        name, raw = m.group(1), _unquote(m.group(2).strip())
        if not self._has(name):
            names = [p["name"] for p in st.workflow["params"]]
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean `{close[0]}`" if close else "its parameters are " + ", ".join(f"`{n}`" for n in names)
            return self._say(f"`{name}` is not a parameter of `{st.workflow['id']}`; {hint}." + self._reminder())
        p = self._param(name)
        try:
            keep, value = self._convert(p, raw)
        except _Unclear as exc:
            return self._say(str(exc) + self._reminder())
        self._store(p, keep, value)
        st.notes.append(f"`{name}` is now " + ("its default." if keep else
                                                "set (sensitive, kept on this machine)." if p.get("sensitive")
                                                else f"`{_fmt(value)}`."))
        if st.pending and st.pending[0] == name:
            self._advance(name)
        else:
            st.pending = [n for n in st.pending if n != name]
            if st.fix and st.fix["param"] == name:
                st.fix = None
        return self._next()

    def _show(self) -> str:
        st = self._state
        if st.workflow is None:
            return "No workflow chosen yet. Describe what you want to do, or type `list`."
        lines = [f"`{st.workflow['id']}` parameters so far:"]
        for name in self._order():
            p = self._param(name)
            if name in st.params:
                shown = "set (sensitive)" if p.get("sensitive") else f"`{_fmt(st.params[name])}`"
            elif "default" in p:
                shown = f"`{_fmt(p['default'])}` (default)"
            else:
                shown = "not set" + (" (required)" if p.get("required") else "")
            lines.append(f"- `{name}`: {shown}")
        return "\n".join(lines) + self._reminder()

    # ---- validation ----------------------------------------------------------------------------
    def _validate(self) -> Reply:
        st = self._state
        # Schema order, so the same answers always make the same arguments.
        params = {n: st.params[n] for n in self._order() if n in st.params}
        return self._call("validate_params", {"workflow": st.workflow["id"], "params": params}, "validate")

    def _on_validate(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            st.mode = "review"
            return self._say(_error_text(result) + "\nChange a value with `set name=value`, or `restart`.")
        if result.get("ok"):
            st.mode, st.fix = "review", None
            return self._say(
                f"The gate accepts these parameters. The draft config is written to `{result.get('config_path')}` "
                f"(invocation `{str(result.get('invocation_id', ''))[:12]}`).\n"
                "Approve it in the panel to run it, or change a value with `set name=value` (I re-validate).")
        errors = result.get("errors") or []
        if not errors:
            st.mode = "review"
            return self._say("The gate refused these parameters without saying why. Try `show`, `set` or `restart`.")
        first = errors[0]
        text = f"The gate refused this: {first.get('message')}"
        if first.get("hint"):
            text += f"\nFix: {first['hint']}"
        name = _param_of(first.get("path", ""))
        others = sorted({_param_of(e.get("path", "")) or e.get("path", "") for e in errors[1:]} - {name})
        if others:
            text += "\n(The gate refused " + ", ".join(f"`{o}`" for o in others) + " too; that comes next.)"
        if name is None or not self._has(name):
            st.mode = "review"
            return self._say(text + "\nChange a value with `set name=value`, or `restart`.")
        st.notes.append(text)
        st.fix = {"param": name, "choices": first.get("choices")}
        st.pending = [name] + [n for n in st.pending if n != name]
        st.mode = "ask"
        return self._ask()


# ---- pure helpers --------------------------------------------------------------------------------
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


def _unquote(text: str) -> str:
    """Strip one pair of wrapping backticks or quotes: researchers copy `names` from the messages."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "`'\"":
        return text[1:-1].strip()
    return text


def _keywords(text: str) -> str:
    words = [w for w in re.split(r"\s+", text.strip()) if w.lower().strip(".,;:!?") not in FILLER]
    return " ".join(words) or text.strip()


def _error_text(result: dict) -> str:
    err = result.get("error") or {}
    text = str(err.get("message") or "the action failed")
    return text[:1].upper() + text[1:] + (f"\nFix: {err['hint']}" if err.get("hint") else "")


def _numbered_workflows(matches: list[dict]) -> str:
    return "\n".join(f"{i}. `{m['id']}`: {m.get('title', '')}" for i, m in enumerate(matches, 1))


def _summary(wf: dict, n_params: int) -> str:
    outputs = ", ".join(f"`{o['name']}` ({o.get('type')})" for o in wf.get("outputs") or [])
    lines = [f"**{wf.get('title')}** (`{wf.get('id')}` {wf.get('version')})", str(wf.get("description", "")).strip()]
    if outputs:
        lines.append(f"Outputs: {outputs}.")
    if n_params:
        lines.append(f"I'll ask for {n_params} parameter{'s' if n_params != 1 else ''}, required ones first. "
                     "`done` keeps the defaults for the rest, `back` returns to the previous question.")
    return "\n".join(lines)


def _param_of(path: str) -> str | None:
    """'params.columns[1]' -> 'columns': gate error paths point inside a top-level parameter."""
    m = re.match(r"^params\.([^.\[]+)", path or "")
    return m.group(1) if m else None


def _types(p: dict) -> list[str]:
    t = p.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []  # enum-only params carry no type


def _item_types(p: dict) -> list[str]:
    items = p.get("items")
    return _types(items) if isinstance(items, dict) else []


def _type_text(p: dict) -> str:
    types = _types(p) or (["choice"] if "enum" in p else ["text"])
    text = " or ".join(types)
    if "array" in types and _item_types(p):
        text = text.replace("array", f"list of {' or '.join(_item_types(p))}")
    return text


def _range_text(p: dict) -> str:
    if "minimum" in p and "maximum" in p:
        return f"from {p['minimum']} to {p['maximum']}"
    return f"at least {p['minimum']}" if "minimum" in p else f"at most {p['maximum']}"


def _how_to_answer(p: dict, has_choices: bool) -> str:
    types = _types(p)
    if "array" in types:
        how = ("Answer with numbers or names, separated by commas" if has_choices
               else "Answer with values separated by commas")
    elif has_choices:
        how = ("Answer with a number or a path" if p.get("artifact") else
               "Answer with a number or a value" if "enum" in p else "Answer with a number or a name")
    elif "boolean" in types:
        how = "Answer yes or no"
    elif "object" in types:
        how = "Answer with JSON, e.g. `{\"name\": value}`, or `name=value` pairs separated by commas"
    else:
        how = f"Answer with {_article(types[0])}" if types and types[0] != "null" else "Answer with a value"
    if "null" in types:
        how += "; `null` for none"
    if "default" in p:
        how += f"; `default` keeps `{_fmt(p['default'])}`"
    elif not p.get("required"):
        how += "; `skip` leaves it out"
    return how + "."


def _article(type_name: str) -> str:
    return f"an {type_name}" if type_name[:1] in "aeiou" else f"a {type_name}"


def _fmt(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _files_of_type(files: list[str], artifact: str) -> list[str]:
    """Files whose extension the artifact type claims (all files when none does: the gate has the last word)."""
    extensions = tuple(artifact_types().get(artifact, {}).get("extensions") or ())
    matching = [f for f in files if f.lower().endswith(extensions)] if extensions else []
    return matching or list(files)


def _example(types: list[str], p: dict) -> str:
    """A value of the expected type for the re-ask message, preferring the param's own default."""
    if "default" in p and p["default"] is not None and not isinstance(p["default"], (dict, list)):
        return _fmt(p["default"])
    samples = {"integer": str(int(p.get("minimum", 1))), "number": str(p.get("minimum", 0.5)), "boolean": "yes",
               "string": "text", "array": "a, b", "object": '{"name": 1}'}
    return next((samples[t] for t in types if t in samples), "text")


def _typed(p: dict, text: str, choices: list) -> Any:
    """The answer converted to the param's type; numbers pick from `choices`. Raises _Unclear."""
    types = _types(p)
    if "null" in types and text.lower() == "null":
        return None
    if "array" in types:
        return _typed_list(p, text, choices)
    if choices:
        picked = _pick(text, choices)
        if picked is not _NONE:
            return picked
        if "enum" in p:
            close = difflib.get_close_matches(text, [str(c) for c in choices], n=1)
            raise _Unclear(f"`{text}` is not one of the choices for `{p['name']}`"
                           + (f"; did you mean `{close[0]}`?" if close else "; pick a number from the list."))
        if text.isdigit() and not {"integer", "number"} & set(types):
            raise _Unclear(f"`{text}` is not on the list; pick a number from 1 to {len(choices)} or type a value.")
    return _scalar(text, types, f"`{p['name']}`", _example(types, p))


_NONE = object()


def _pick(text: str, choices: list) -> Any:
    """A numbered choice, or a choice typed out (any case); _NONE when it is neither."""
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    for c in choices:
        if str(c) == text:
            return c
    lowered = [c for c in choices if str(c).lower() == text.lower()]
    return lowered[0] if len(lowered) == 1 else _NONE


def _typed_list(p: dict, text: str, choices: list) -> list:
    name = p["name"]
    if text.startswith("["):
        try:
            raw = json.loads(text)
        except ValueError:
            raw = None
        if not isinstance(raw, list):
            raise _Unclear(f"`{text}` is not a list. `{name}` expects values separated by commas, e.g. `a, b`.")
        items = [x if isinstance(x, str) else json.dumps(x) for x in raw]
    else:
        items = [_unquote(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise _Unclear(f"`{name}` expects values separated by commas, e.g. `a, b`.")
    item_types = _item_types(p)
    out = []
    for item in items:
        picked = _pick(item, choices) if choices else _NONE
        if picked is _NONE and choices and item.isdigit() and not {"integer", "number"} & set(item_types):
            raise _Unclear(f"`{item}` is not on the list; use numbers from 1 to {len(choices)} or names.")
        out.append(picked if picked is not _NONE else
                   _scalar(item, item_types, f"each item of `{name}`", _example(item_types, {})))
    return out


def _scalar(text: str, types: list[str], what: str, example: str) -> Any:
    """Try each declared type in order; strings accept anything, so they come last."""
    for t in [t for t in types if t not in ("string", "null", "array")] + (["string"] if "string" in types else []):
        value = _as(t, text)
        if value is not _NONE:
            return value
    if not types:
        return text  # an enum-only or untyped param: the gate judges the text
    wanted = " or ".join(t for t in types if t != "null") or "null"
    return _raise(f"`{text}` is not {_article(wanted)}: {what} expects {_article(wanted)}, e.g. `{example}`.")


def _raise(message: str):
    raise _Unclear(message)


def _as(type_name: str, text: str) -> Any:
    low = text.lower()
    if type_name == "boolean":
        return True if low in TRUE_WORDS else False if low in FALSE_WORDS else _NONE
    if type_name == "integer":
        try:
            return int(text)
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                return _NONE
            return int(f) if f.is_integer() else _NONE  # "1e3" and "5.0" are whole numbers
    if type_name == "number":
        try:
            f = float(text)
        except ValueError:
            return _NONE
        if not math.isfinite(f):
            return _NONE  # NaN and infinity pass every JSON Schema bound; a run config cannot hold them
        return int(f) if re.fullmatch(r"[+-]?\d+", text) else f
    if type_name == "object":
        return _as_object(text)
    if type_name == "string":
        return text
    return _NONE


def _as_object(text: str) -> Any:
    """JSON, or `name=value, name=value` with JSON scalar values (bare words become strings)."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return _NONE
        return value if isinstance(value, dict) else _NONE
    out = {}
    for part in (x.strip() for x in text.split(",") if x.strip()):
        key, sep, raw = part.partition("=")
        if not sep or not key.strip():
            return _NONE
        raw = raw.strip()
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out or _NONE
