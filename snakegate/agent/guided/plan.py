"""The guided dialogue's plans: a request for a chain of workflows becomes a plan, filled step by step.

A mixin of `GuidedBackend` (dialogue.py), before `Filling` (fill.py), whose question
machinery it reuses one step at a time. "Profile my table, then benchmark a
classifier on the cleaned result" is read as two parts (parse.chain_parts); each
part is found with `search_workflows` and described with `describe_workflow`, as
a model would. Where types allow, a step's input file is taken from an earlier
step's output (nearest earlier step first, outputs in declared order, by
`snakegate.contract.artifacts.takes`), and the proposed chain is shown. Then the
missing params are asked step by step, each question naming its step: the
required ones, and those naming columns of a table (whose choices, for a table an
earlier step makes, are that output's declared columns, computed by
`snakegate.contract.outputs.declared_columns` from the earlier step's answers).
The plan goes to the gate through `propose_plan` (a follow-up "then also …"
through `add_step`, a fix through `replace_step`, `remove step NAME` through
`remove_step`); a refusal names a step and a field and comes back as that
step's question; a passing plan is shown with its steps and edges, for the
person to approve in the panel. It never decides validity: the gate does.
"""

from __future__ import annotations

import re
from typing import Any

from snakegate.agent.backend import Reply
from snakegate.agent.guided.parse import chain_parts, keywords, step_param
from snakegate.agent.guided.text import error_text, numbered_workflows, plan_chain_text, plan_result_text, \
    plan_show_text
from snakegate.agent.prompt import CLEAR_RATIO
from snakegate.contract.artifacts import takes
from snakegate.contract.outputs import declared_columns
from snakegate.registry.links import step_name

STEP_PATH = re.compile(r"^steps\.([^.\[]+)\.params\.([^.\[]+)")


class Planning:
    """Mixin: expects the GuidedBackend state and Filling's question machinery."""

    # ---- starting a plan ---------------------------------------------------------------------------
    def _chain(self, text: str) -> Reply | None:
        """A request naming several steps starts a plan; None when it names one."""
        parts = chain_parts(text)
        if len(parts) < 2:
            return None
        st = self._state
        st.plan, st.plan_parts, st.plan_made, st.plan_at, st.adding = [], list(parts), False, None, None
        st.workflow, st.params, st.pending, st.fix = None, {}, [], None
        st.mode, st.request_text = "plan", text
        return self._next_part()

    def _add_to_plan(self, rest: str) -> Reply:
        """A follow-up ("then also …"): its parts become new steps after the plan (or after the single
        workflow drafted so far, which becomes the plan's first step)."""
        st = self._state
        if not st.plan:
            wf = st.workflow
            st.plan = [{"name": step_name(wf["id"]), "workflow": wf, "params": st.params, "questions": [],
                        "pending": [], "text": st.request_text}]
            st.plan_made = False  # the gate has only seen it as one workflow: the plan is proposed whole
        st.plan_parts, st.plan_at, st.fix, st.pending = chain_parts(rest) or [rest], None, None, []
        st.mode = "plan"
        return self._next_part()

    def _next_part(self) -> Reply:
        st = self._state
        if st.plan_parts:
            part = st.plan_parts[0]
            return self._call("search_workflows", {"query": keywords(part), "limit": 5}, "plan_search", {"text": part})
        return self._start_filling()

    def _on_plan_search(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result))
        matches = result.get("matches") or []
        n = len(st.plan) + 1
        if not matches:
            st.plan_parts = []
            st.mode = "review" if st.plan_made else "start"
            return self._say(f"No workflow matches “{ctx['text']}” (step {n}). Describe that step in other words, "
                             "or type `list` to see the workflows.")
        scores = [float(m.get("score") or 0) for m in matches]
        if len(matches) == 1 or scores[0] >= CLEAR_RATIO * scores[1]:
            return self._call("describe_workflow", {"workflow": matches[0]["id"]}, "plan_describe", ctx)
        st.listed, st.mode = [m["id"] for m in matches], "choose"
        return self._say("\n".join([f"Several workflows match “{ctx['text']}” for step {n}:",
                                    numbered_workflows(matches), "Pick one by number or id."]))

    def _pick_step_workflow(self, wf_id: str) -> Reply:
        """The researcher picked the workflow for the step whose search was not clear."""
        text = self._state.plan_parts[0] if self._state.plan_parts else ""
        return self._call("describe_workflow", {"workflow": wf_id}, "plan_describe", {"text": text})

    def _on_plan_describe(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:
            return self._say(error_text(result))
        if st.plan_parts:
            st.plan_parts.pop(0)
        name = step_name(result["id"], {s["name"] for s in st.plan})
        params: dict[str, Any] = {}
        for p in result.get("params") or []:
            edge = self._edge_for(p)
            if edge is not None:
                params[p["name"]] = {"from": edge[0], "output": edge[1]}
        st.plan.append({"name": name, "workflow": result, "params": params, "questions": None, "pending": [],
                        "text": ctx.get("text") or ""})
        if st.plan_made:
            st.adding = name
        return self._next_part()

    def _edge_for(self, p: dict) -> tuple[str, str] | None:
        """(step, output) for an input-file param: the nearest earlier step's first output whose type it takes."""
        if not p.get("artifact") or p.get("sensitive"):
            return None
        for step in reversed(self._state.plan):
            for out in step["workflow"].get("outputs") or []:
                if takes(str(p["artifact"]), str(out.get("type"))) and "{" not in str(out.get("path", "")):
                    return step["name"], out["name"]
        return None

    # ---- filling the steps -------------------------------------------------------------------------
    def _start_filling(self) -> Reply:
        st = self._state
        st.notes.append(plan_chain_text(st.plan))
        for i, step in enumerate(st.plan):
            if step["questions"] is None:
                return self._fill_step(i)
        return self._submit()

    def _load_step(self, i: int) -> None:
        """Make step `i` the one being filled: the Filling state points at its workflow, params and open
        questions (those of the step left are kept with it)."""
        st = self._state
        if st.plan_at is not None and st.plan_at < len(st.plan):
            st.plan[st.plan_at]["pending"] = list(st.pending)
        step = st.plan[i]
        st.plan_at = i
        st.workflow, st.params, st.pending = step["workflow"], step["params"], list(step.get("pending") or [])
        st.fix, st.folders = None, {}

    def _fill_step(self, i: int) -> Reply:
        """Start asking step `i`'s questions (the values its part of the request names are taken first)."""
        st = self._state
        self._load_step(i)
        st.asked, st.checks = [], []
        self._take_request_values(st.plan[i]["text"])
        st.plan[i]["questions"] = self._step_questions(st.plan[i])
        st.pending = [n for n in st.plan[i]["questions"] if n not in st.params]
        return self._next()

    def _step_questions(self, step: dict) -> list[str]:
        """What is asked of a step: its required params, then those naming columns of a table it has."""
        params = step["workflow"].get("params") or []
        required = [p["name"] for p in params if p.get("required") and p["name"] not in step["params"]]
        columns = [p["name"] for p in params if not p.get("required") and self._column_ref(p)]
        return required + columns

    @staticmethod
    def _column_ref(p: dict) -> str | None:
        return p.get("column_of") or ((p.get("keys") or {}).get("x-column-of") if isinstance(p.get("keys"), dict)
                                      else None)

    def _in_plan(self) -> bool:
        st = self._state
        return bool(st.plan) and st.plan_at is not None and st.workflow is st.plan[st.plan_at]["workflow"]

    # Filling's hooks, plan-aware -----------------------------------------------------------------------
    def _order(self) -> list[str]:
        if self._in_plan():
            st = self._state
            asked = st.plan[st.plan_at]["questions"] or []
            return asked + [n for n in st.pending if n not in asked]
        return super()._order()

    def _question(self, p: dict, brief: bool = False) -> str:
        text = super()._question(p, brief)
        if not self._in_plan():
            return text
        st = self._state
        step = st.plan[st.plan_at]
        return f"Step {st.plan_at + 1}/{len(st.plan)} `{step['name']}` ({step['workflow']['id']})\n{text}"

    def _table_of(self, p: dict) -> str | None:
        """For a param naming columns of a table an earlier step makes: that output, whose declared columns
        are put where Filling looks for a table's columns."""
        if self._in_plan():
            st = self._state
            ref = self._column_ref(p)
            value = st.params.get(ref) if ref else None
            if isinstance(value, dict) and "from" in value:
                key = f"{value['from']}.{value.get('output')}"
                st.columns[key] = self._made_columns(value["from"], str(value.get("output")), set())
                return key
        return super()._table_of(p)

    def _made_columns(self, step_name_: str, output: str, seen: set[str]) -> list[str] | None:
        """The columns step `step_name_`'s output declares for the answers so far (None: unknown yet)."""
        st = self._state
        step = next((s for s in st.plan if s["name"] == step_name_), None)
        if step is None or step_name_ in seen:
            return None
        decl = next((o for o in step["workflow"].get("outputs") or [] if o.get("name") == output), None)
        if decl is None:
            return None
        params = {p["name"]: p["default"] for p in step["workflow"].get("params") or [] if "default" in p}
        params.update(step["params"])

        def header_of(param: str) -> list[str] | None:
            value = params.get(param)
            if isinstance(value, dict) and "from" in value:
                return self._made_columns(value["from"], str(value.get("output")), seen | {step_name_})
            return st.columns.get(value) if isinstance(value, str) else None
        return declared_columns(decl, params, header_of)

    def _validate(self) -> Reply:
        """The step being filled has its answers: fill the next one, or send the plan to the gate."""
        if not self._in_plan():
            return super()._validate()
        st = self._state
        st.plan[st.plan_at]["pending"] = []
        for i, step in enumerate(st.plan):
            if step["questions"] is None:
                return self._fill_step(i)
        for i, step in enumerate(st.plan):
            if step.get("pending"):  # left open when another step was set meanwhile
                self._load_step(i)
                st.mode = "ask"
                return self._ask()
        return self._submit()

    def _submit(self) -> Reply:
        st = self._state
        steps = [self._step_args(s) for s in st.plan]
        if not st.plan_made:
            return self._call("propose_plan", {"steps": steps}, "plan_result")
        if st.adding is not None:
            step = next(s for s in steps if s["name"] == st.adding)
            return self._call("add_step", step, "plan_result")
        at = st.plan_at if st.plan_at is not None else len(st.plan) - 1
        return self._call("replace_step", steps[at], "plan_result")

    def _step_args(self, step: dict) -> dict:
        # schema order, so the same answers always make the same arguments
        order = [p["name"] for p in step["workflow"].get("params") or []]
        params = {n: step["params"][n] for n in order if n in step["params"]}
        return {"name": step["name"], "workflow": step["workflow"]["id"], "params": params}

    # ---- the gate's answer ---------------------------------------------------------------------------
    def _on_plan_result(self, result: dict, ctx: dict) -> Reply:
        st = self._state
        if "error" in result:  # the action refused its arguments: the plan is as it was
            st.mode = "review"
            return self._say(error_text(result) + "\nChange a value with `set step.name=value`, or `restart`.")
        st.plan_made, st.adding = True, None
        if ctx.get("remove"):  # the step is gone from the plan, whether the rest passes or not
            st.plan = [s for s in st.plan if s["name"] != ctx["remove"]]
            st.plan_at, st.workflow, st.pending = None, None, []
        if result.get("ok"):
            st.mode, st.fix, st.drafted, st.used = "review", None, True, False
            return self._say(plan_result_text(result))
        errors = result.get("errors") or []
        first = errors[0] if errors else {}
        text = f"The gate refused the plan: {first.get('message') or 'without saying why'}"
        if first.get("hint"):
            text += f"\nFix: {first['hint']}"
        if len(errors) > 1:
            text += f"\n({len(errors) - 1} more problem{'s' if len(errors) > 2 else ''}; they come next.)"
        m = STEP_PATH.match(first.get("path") or "")
        i = next((k for k, s in enumerate(st.plan) if m and s["name"] == m.group(1)), None)
        if i is None or not any(p["name"] == m.group(2) for p in st.plan[i]["workflow"].get("params") or []):
            st.mode = "review"
            return self._say(text + "\nChange a value with `set step.name=value`, `remove step NAME`, or `restart`.")
        name = m.group(2)
        step = st.plan[i]
        if name not in step["questions"]:
            step["questions"].append(name)
        st.notes.append(text)
        self._load_step(i)
        st.fix = {"param": name, "choices": first.get("choices")}
        st.pending = [name] + [n for n in st.pending if n != name]
        st.mode = "ask"
        return self._ask()

    # ---- commands while planning ---------------------------------------------------------------------
    def _plan_set(self, text: str) -> Reply | None:
        """`set step.name=value` (or `set name=value` for the step being filled); None when not planning."""
        st = self._state
        if not st.plan:
            return None
        m = re.match(r"^([^=\s]+)\s*=", text)
        step, _ = step_param(m.group(1), [s["name"] for s in st.plan]) if m else (None, "")
        if step is None and st.plan_at is None:
            names = ", ".join(f"`{s['name']}`" for s in st.plan)
            return self._say(f"Name the step too: `set step.name=value` (steps: {names}).")
        if step is not None:
            self._load_step(next(k for k, s in enumerate(st.plan) if s["name"] == step))
            text = text[len(step) + 1:]
        return self._set(text)

    def _plan_remove(self, name: str) -> Reply:
        st = self._state
        names = [s["name"] for s in st.plan]
        if name not in names:
            return self._say(f"The plan has no step `{name}` (steps: {', '.join(f'`{n}`' for n in names)}).")
        if not st.plan_made:
            return self._say("The plan has not been checked yet; answer its questions first, or `restart`.")
        return self._call("remove_step", {"name": name}, "plan_result", {"remove": name})

    def _plan_done(self) -> Reply:
        """`done`: every step keeps the defaults of what is still open; the plan goes to the gate."""
        st = self._state
        for i, step in enumerate(st.plan):
            if step["questions"] is None:  # not reached yet: what its part of the request names still counts
                self._load_step(i)
                self._take_request_values(step["text"], prove_paths=False)
                step["questions"] = []
            step["pending"] = []
        st.pending, st.fix = [], None
        return self._submit()

    def _plan_show(self) -> str:
        st = self._state
        return plan_show_text(st.plan, st.plan_at if st.mode == "ask" else None) + self._reminder()
