"""The guided dialogue's parameter filling: ask one question per parameter, check each answer, then validate.

A mixin of `GuidedBackend` (dialogue.py) holding the part of the state machine
that fills a described workflow: values a first request already named (a
file only for a param whose artifact type it fits; "my penguins table" for the
one data file whose name shares a word with the request),
questions in schema order (required first) offering files, columns and
allowed values, each answer checked as it is given (type, allowed value,
range, column of the table — every wrong name at once, and a `yes` takes a
"did you mean" — a file of the param's type, and a path through `inspect_data`,
which refuses anything outside the data roots) and asked again at once when it
fails; a default that is no column of the chosen table is never kept;
`set`, `back`, `done`, `show`; and `validate_params` at the end, whose
refusals come back as the next question. It never decides validity beyond
that: the gate does.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from snakegate.agent.backend import Reply
from snakegate.agent.guided.named import files_as, misplaced_file, named_values
from snakegate.agent.guided.parse import (
    KEEP_DEFAULT, TRUE_WORDS, Unclear, check, column_from_request, file_from_words, fmt, misfit, param_of, request_values, typed, unquote,
)
from snakegate.agent.guided.stated import param_numbers
from snakegate.agent.guided.text import (
    APPROVE, default_fits, error_text, files_of_type, from_request, question, summary, value_text,
)
from snakegate.agent.redact import PLACEHOLDER

MAX_CHOICES = 30   # longer file or column lists are cut; the researcher can still type any name


class Filling:
    """Mixin: expects `self._state`, `self._say`, `self._call` and `self._reminder` from GuidedBackend."""

    # ---- the workflow --------------------------------------------------------------------------
    def _on_describe(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result))
        params = result.get("params") or []
        st.tables[result.get("id")] = params  # a follow-up about one of its runs reads the same table
        st.workflow, st.params, st.asked, st.fix, st.folders, st.checks = result, {}, [], None, {}, []
        st.suggested, st.cued = None, set()
        st.pending = self._order()
        st.mode = "ask"
        st.notes.append(summary(result, len(params)))
        self._take_request_values(ctx.get("text") or "")
        return self._next()

    def _take_request_values(self, text: str, prove_paths: bool = True) -> None:
        """Use the values the request already names (a path is first proven by inspect_data, unless
        `prove_paths` is False: then the gate alone proves it)."""
        st = self._state
        params = st.workflow.get("params") or []
        found = {**request_values(text, params), **files_as(text, params)} if text else {}
        for name, value in {**named_values(text, params), **param_numbers(text, params)}.items():
            found.setdefault(name, value)  # "seed 42", "signal ROI 8 16 12 20", "feature columns Fe, Ni"
        found.update(misplaced_file(text, params, set(found)) if text else {})  # "the variants in reference.fa"
        found = {k: v for k, v in found.items() if k not in st.params}  # never over a value already set
        sensitive = {p["name"] for p in params if p.get("sensitive")}
        st.taken = {k: "(sensitive)" if k in sensitive else fmt(v) for k, v in found.items()}
        for name, value in found.items():
            p = self._param(name)
            wrong = misfit(value, p["artifact"]) if p.get("artifact") and isinstance(value, str) else None
            if wrong:  # `reference=alpha.fq.gz`: said, and the question about it will come
                st.notes.append(f"I did not take `{name}` from your request: {wrong}")
                st.taken.pop(name, None)
                st.cued.add(name)  # no other file is picked for it from the request's words
                continue
            if p.get("artifact") and isinstance(value, str) and not value.startswith("builtin:") and prove_paths:
                st.checks.append((name, value))  # a path: inspect_data proves it is inside the data roots
                continue
            try:
                value = typed(p, value, []) if isinstance(value, str) and not p.get("artifact") else value
                check(p, value, None)
            except Unclear:
                continue  # not usable as given: the question will come
            self._store(p, False, value)
            self._advance(name)
        taken = {k: v for k, v in found.items() if k in st.taken}  # not a file said of the wrong type
        if taken:
            st.notes.append(from_request(taken, {p["name"] for p in params if p.get("sensitive")}))
        st.request_text = text

    def _param(self, name: str) -> dict:
        return next(p for p in self._state.workflow["params"] if p["name"] == name)

    def _has(self, name: str) -> bool:
        return any(p["name"] == name for p in self._state.workflow["params"])

    def _order(self) -> list[str]:
        params = self._state.workflow["params"]
        return [p["name"] for p in params if p.get("required")] + [p["name"] for p in params if not p.get("required")]

    def _table_of(self, p: dict) -> str | None:
        """The file path whose columns a column (or per-column) param chooses from, when there is one."""
        ref = p.get("column_of") or ((p.get("keys") or {}).get("x-column-of") if isinstance(p.get("keys"), dict)
                                     else None)
        if not ref or not self._has(ref):
            return None
        value = self._state.params.get(ref, self._param(ref).get("default"))
        if not isinstance(value, str) or not value or value.startswith("builtin:") or value == PLACEHOLDER:
            return None  # a built-in dataset has no file to look at
        return value

    # ---- what is asked now, for a screen --------------------------------------------------------
    def status(self) -> dict | None:
        """The open question, for a status line that stays in view: {workflow, step (a plan's, else None),
        question, default (what an empty answer keeps, None when it keeps nothing usable), taken (what the
        request set)}; None when no question is open."""
        st = self._state
        if st.mode != "ask" or not st.pending or st.workflow is None or not self._has(st.pending[0]):
            return None
        p = self._param(st.pending[0])
        keeps = "default" in p and default_fits(p, self._columns_for(p))
        step = st.plan[st.plan_at].get("name") if st.plan and st.plan_at is not None else None
        return {"workflow": st.workflow.get("id"), "step": step, "question": p["name"],
                "default": fmt(p["default"]) if keeps else None, "taken": dict(st.taken)}

    # ---- asking ----------------------------------------------------------------------------------
    def _next(self) -> Reply:
        st = self._state
        if st.checks:
            name, value = st.checks.pop(0)
            return self._call("inspect_data", {"path": value}, "check_path",
                              {"param": name, "value": value, "from_request": True})
        if st.pending:
            st.mode = "ask"
            return self._ask()
        return self._validate()

    def _ask(self) -> Reply:
        """Ask the current question, first fetching the files or columns it offers as choices."""
        st = self._state
        p = self._param(st.pending[0])
        if p.get("artifact") and st.files is None:
            return self._call("inspect_data", {"path": ""}, "files")
        if p.get("artifact") and p["name"] not in st.cued and p["name"] not in st.params and st.request_text:
            st.cued.add(p["name"])  # once: a refused cue falls back to the question
            wf = st.workflow or {}
            # the param's own name is no cue: "as the reference" does not name reference.fa
            hit = file_from_words(st.request_text, files_of_type(st.files or [], p["artifact"]),
                                  ignore=f"{wf.get('id', '')} {wf.get('title', '')} {p['name'].replace('_', ' ')}")
            if hit:
                st.notes.append(f"From your request: `{p['name']}` = `{hit}` (the one data file it names).")
                st.taken[p["name"]] = hit
                return self._call("inspect_data", {"path": hit}, "check_path",
                                  {"param": p["name"], "value": hit, "from_request": True})
        table = self._table_of(p)
        if table is not None and table not in st.columns:
            return self._call("inspect_data", {"path": table}, "columns", {"table": table})
        return self._say(self._question(p), secret=p["name"] if p.get("sensitive") else None)

    def _choices(self, p: dict) -> list:
        """The numbered choices offered for `p`: the gate's after a refusal, else enum, files or columns."""
        st = self._state
        if st.fix and st.fix["param"] == p["name"] and st.fix.get("choices"):
            return list(st.fix["choices"])
        if "enum" in p:
            return list(p["enum"])
        if p.get("artifact"):
            if p["name"] in st.folders:
                return list(st.folders[p["name"]])[:MAX_CHOICES]
            return list(p.get("builtins") or []) + files_of_type(st.files or [], p["artifact"])[:MAX_CHOICES]
        table = self._table_of(p)
        if table is not None and p.get("column_of"):
            return list(st.columns.get(table) or [])[:MAX_CHOICES]
        return []

    def _question(self, p: dict, brief: bool = False) -> str:
        st = self._state
        order = self._order()
        table = self._table_of(p)
        return question(p, order.index(p["name"]) + 1, len(order), self._choices(p),
                        current=st.params.get(p["name"]), has_current=p["name"] in st.params, brief=brief,
                        fixing=bool(st.fix and st.fix["param"] == p["name"]),
                        table_columns=st.columns.get(table) if table else None)

    def _columns_for(self, p: dict) -> list[str] | None:
        table = self._table_of(p)
        return self._state.columns.get(table) if table else None

    # ---- answering -------------------------------------------------------------------------------
    def _answer(self, text: str) -> Reply:
        st = self._state
        p = self._param(st.pending[0])
        suggested, st.suggested = st.suggested, None  # a "did you mean" holds for the next answer only
        try:
            if suggested and suggested[0] == p["name"] and text.lower().rstrip(".!") in TRUE_WORDS:
                keep, value = False, suggested[1]
                check(p, value, self._columns_for(p))
            else:
                keep, value = self._convert(p, text)
        except Unclear as exc:
            if exc.suggestion is not None:
                st.suggested = (p["name"], exc.suggestion)
            return self._say(f"{exc}\n\n{self._question(p, brief=True)}", secret=p["name"] if p.get("sensitive")
                             else None)
        if not keep and p.get("artifact") and isinstance(value, str) and not value.startswith("builtin:"):
            return self._call("inspect_data", {"path": value}, "check_path", {"param": p["name"], "value": value})
        self._store(p, keep, value)
        self._advance(p["name"])
        return self._next()

    def _convert(self, p: dict, text: str) -> tuple[bool, Any]:
        """(keep the default?, value) for an answer, or Unclear naming the value and what was expected."""
        name = p["name"]
        if text.lower() in KEEP_DEFAULT:
            if p.get("required") and "default" not in p:
                raise Unclear(f"`{name}` is required and has no default; please give a value.")
            if not default_fits(p, self._columns_for(p)):
                raise Unclear(f"The default of `{name}`, `{fmt(p['default'])}`, is not a column of `{self._table_of(p)}`;"
                              " pick one of its columns.")
            return True, None
        value = typed(p, text, self._choices(p))
        check(p, value, self._columns_for(p))
        wrong = misfit(value, p["artifact"]) if p.get("artifact") and isinstance(value, str) else None
        if wrong:
            raise Unclear(wrong)
        return False, value

    def _on_check_path(self, result: dict, ctx: dict) -> Reply:
        """inspect_data's answer about a path the researcher gave: use it, offer a folder's files, or ask again."""
        st = self._state
        name, value = ctx["param"], ctx["value"]
        if st.workflow is None or not self._has(name):
            return self._say("")
        p = self._param(name)
        if "error" in result:
            err = result["error"].get("message") or "that path cannot be used"
            lead = f"I could not use `{value}` from your request: {err}" if ctx.get("from_request") else \
                f"{err[:1].upper() + err[1:]}"
            st.pending = [name] + [n for n in st.pending if n != name]
            st.notes.append(lead)
            return self._next()
        if result.get("kind") == "folder":
            files = [e["path"] for e in result.get("entries") or [] if e.get("kind") == "file"]
            st.folders[name] = files_of_type(files, p["artifact"]) if files else []
            st.pending = [name] + [n for n in st.pending if n != name]
            st.notes.append(f"`{value}` is a folder; pick a file in it.")
            return self._next()
        if isinstance(result.get("columns"), list):
            st.columns[result.get("path") or value] = list(result["columns"])
            st.columns[value] = list(result["columns"])
        st.folders.pop(name, None)
        self._store(p, False, value)
        self._advance(name)
        if ctx.get("from_request") and isinstance(result.get("columns"), list):
            # "target hardness_hv": one word of a column param's name, before a column the table has
            open_params = [q for q in st.workflow["params"] if q["name"] not in st.params]
            for key, value in named_values(st.request_text, open_params, {name: result["columns"]}).items():
                try:
                    check(self._param(key), value, result["columns"])
                except Unclear:
                    continue  # not a column of this table: the question about it will come
                self._store(self._param(key), False, value)
                self._advance(key)
                st.notes.append(f"From your request: `{key}` = `{fmt(value)}`.")
                st.taken[key] = fmt(value)
            hit = column_from_request(st.request_text, st.workflow["params"], result["columns"], set(st.params))
            if hit:
                self._store(self._param(hit[0]), False, hit[1])
                self._advance(hit[0])
                st.notes.append(f"From your request: `{hit[0]}` = `{hit[1]}`.")
                st.taken[hit[0]] = hit[1]
        return self._next()

    def _masked(self, name: str) -> Reply:
        """The researcher entered `name` in the masked field: the value stays out of the dialogue."""
        st = self._state
        top = name.split(".")[0]
        if st.workflow is None or not self._has(top):
            return self._say(f"Noted `{name}`; pick a workflow that uses it." + self._reminder())
        parts = name.split(".")
        if len(parts) == 1:
            st.params[name] = PLACEHOLDER
        else:
            target = st.params.setdefault(top, {})
            for part in parts[1:-1]:
                target = target.setdefault(part, {})
            target[parts[-1]] = PLACEHOLDER
        st.notes.append(f"`{name}` is set (entered in the masked field; it stays on this machine).")
        if st.pending and st.pending[0] == top:
            self._advance(top)
        else:
            st.pending = [n for n in st.pending if n != top]
        return self._next() if st.mode in ("ask", "review") else self._say("" + self._reminder())

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

    # ---- commands --------------------------------------------------------------------------------
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
        name, raw = m.group(1), unquote(m.group(2).strip())
        if not self._has(name):
            names = [p["name"] for p in st.workflow["params"]]
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean `{close[0]}`" if close else "its parameters are " + ", ".join(f"`{n}`" for n in names)
            return self._say(f"`{name}` is not a parameter of `{st.workflow['id']}`; {hint}." + self._reminder())
        p = self._param(name)
        try:
            keep, value = self._convert(p, raw)
        except Unclear as exc:
            return self._say(str(exc) + self._reminder())
        if not keep and p.get("artifact") and isinstance(value, str) and not value.startswith("builtin:"):
            return self._call("inspect_data", {"path": value}, "check_path", {"param": name, "value": value})
        self._store(p, keep, value)
        st.notes.append(f"`{name}` is now " + ("its default." if keep else
                                                "set (sensitive, kept on this machine)." if p.get("sensitive")
                                                else f"`{fmt(value)}`."))
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
        lines += [f"- `{name}`: {value_text(self._param(name), st.params)}" for name in self._order()]
        return "\n".join(lines) + self._reminder()

    # ---- validation ------------------------------------------------------------------------------
    def _validate(self) -> Reply:
        st = self._state
        # Schema order, so the same answers always make the same arguments.
        params = {n: st.params[n] for n in self._order() if n in st.params}
        return self._call("validate_params", {"workflow": st.workflow["id"], "params": params}, "validate")

    def _on_validate(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            st.mode = "review"
            return self._say(error_text(result) + "\nChange a value with `set name=value`, or `restart`.")
        if result.get("ok"):
            st.mode, st.fix, st.drafted, st.used = "review", None, True, False
            return self._say(
                f"The gate accepts these parameters. The draft config is written to `{result.get('config_path')}` "
                f"(invocation `{str(result.get('invocation_id', ''))[:12]}`).\n"
                f"{APPROVE} Or change a value with `set name=value` (I re-validate).")
        errors = result.get("errors") or []
        if not errors:
            st.mode = "review"
            return self._say("The gate refused these parameters without saying why. Try `show`, `set` or `restart`.")
        first = errors[0]
        text = f"The gate refused this: {first.get('message')}"
        if first.get("hint"):
            text += f"\nFix: {first['hint']}"
        name = param_of(first.get("path", ""))
        others = sorted({param_of(e.get("path", "")) or e.get("path", "") for e in errors[1:]} - {name})
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
