"""The guided dialogue's wording: greeting, help, questions, and how action results read. Pure functions.

Everything the dialogue says is built here from plain data (a describe
result's param entry, an action's result); the state machine in dialogue.py
decides what to say when. Nothing here reads, writes or calls anything, and a
sensitive value is never part of a returned string (the dialogue never has it
in plain text once it is entered in the masked field).
"""

from __future__ import annotations

from typing import Any

from snakegate.agent.guided.parse import article, fits, fmt, is_bounds, item_types, types_of
from snakegate.metaschemas import artifact_types
from snakegate.views.verdict import number_text

GREETING = (
    "Hi, I'm the offline guided dialogue (no language model is configured). I help you pick a workflow from "
    "this registry, ask for its parameters one by one and have the gate check them into a run config that "
    "you approve before anything runs.\n"
    "Describe what you want to do (e.g. *profile data/examples/tabular-penguins.csv*), type `list` to see the "
    "workflows, `runs` for earlier runs, or `help` for the commands."
)

HELP = (
    "Commands (any time):\n"
    "- `list`: show all workflows\n"
    "- `show`: the parameters so far\n"
    "- `set name=value`: change one parameter (re-validates once all are answered)\n"
    "- `back`: the previous question\n"
    "- `done`: keep the defaults for the remaining parameters and validate\n"
    "- `restart`: start over\n"
    "- `runs`: earlier runs; `show RUN`: what happened in one; `fork RUN name=value`: a new draft from it\n"
    "- after a run, say a change in your words (*try leave-one-out instead*, *same with Cr below 10*): a fork "
    "of it with only that change, for you to approve; `compare`: the last run against the one before\n"
    "- `try NAME V1 then V2 until CHECK` (or `… and keep the best CHECK`; optional `on RUN`, `budget N`): a "
    "bounded refinement of the latest run, each value read as YAML, approved once with ctrl+r\n"
    "- several steps, one after another: *profile my table, then benchmark a classifier on the cleaned "
    "result*; `then also …` adds a step, `set step.name=value` changes one, `remove step NAME` drops one\n"
    "- `help`: this message\n"
    "Otherwise describe what you want to do, or answer the current question "
    "(`default` keeps a parameter's default)."
)

APPROVE = ("Approving is yours alone, and never a chat message: press **ctrl+r** (or the *Approve and run* button) "
           "in the panel to run the draft shown there.")
DRAFT_USED = ("The draft ran already (one approval, one run), so there is nothing to approve now. Say a change "
              "(*try fill_mean instead*) or type `fork RUN name=value` for a new draft to approve.")
NO_DRAFT_TO_APPROVE = ("There is no draft to approve yet. Once the gate accepts the parameters, the draft appears in "
                       "the panel and you approve it there with **ctrl+r**.")


def error_text(result: dict) -> str:
    err = result.get("error") or {}
    text = str(err.get("message") or "the action failed")
    return text[:1].upper() + text[1:] + (f"\nFix: {err['hint']}" if err.get("hint") else "")


def numbered_workflows(matches: list[dict]) -> str:
    return "\n".join(f"{i}. `{m['id']}`: {m.get('title', '')}" for i, m in enumerate(matches, 1))


def summary(wf: dict, n_params: int) -> str:
    outputs = ", ".join(f"`{o['name']}` ({o.get('type')})" for o in wf.get("outputs") or [])
    lines = [f"**{wf.get('title')}** (`{wf.get('id')}` {wf.get('version')})", str(wf.get("description", "")).strip()]
    if outputs:
        lines.append(f"Outputs: {outputs}.")
    if n_params:
        lines.append(f"I'll ask for {n_params} parameter{'s' if n_params != 1 else ''}, required ones first. "
                     "`done` keeps the defaults for the rest, `back` returns to the previous question.")
    return "\n".join(lines)


def from_request(found: dict[str, Any], sensitive: set[str]) -> str:
    shown = ", ".join(f"`{k}` = " + ("(sensitive)" if k in sensitive else f"`{fmt(v)}`") for k, v in found.items())
    return f"From your request: {shown}."


def type_text(p: dict) -> str:
    types = types_of(p) or (["choice"] if "enum" in p else ["text"])
    text = " or ".join(types)
    if "array" in types and item_types(p):
        text = text.replace("array", f"list of {' or '.join(item_types(p))}")
    if is_bounds(p):
        text = "bounds per column"
    return text


def range_text(p: dict) -> str:
    if "minimum" in p and "maximum" in p:
        return f"from {p['minimum']} to {p['maximum']}"
    return f"at least {p['minimum']}" if "minimum" in p else f"at most {p['maximum']}"


def default_fits(p: dict, table_columns: list[str] | None) -> bool:
    """Whether the default of a column param is a column of the chosen table (unknown columns: yes)."""
    if "default" not in p or not p.get("column_of") or table_columns is None:
        return True
    default = p["default"]
    return all(c in table_columns for c in (default if isinstance(default, list) else [default])
               if isinstance(c, str))


def how_to_answer(p: dict, has_choices: bool, keeps_default: bool = True) -> str:
    types = types_of(p)
    if is_bounds(p):
        how = ("Answer with bounds per column, e.g. `Cr between 15 and 30`, `Cr.max=25`, `Ni <= 5` or "
               "`{\"Cr\": {\"min\": 15, \"max\": 30}}`; separate several with commas; `none` for no bounds")
    elif "array" in types:
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
        how = f"Answer with {article(types[0])}" if types and types[0] != "null" else "Answer with a value"
    if "null" in types:
        how += "; `null` for none"
    if "default" in p and keeps_default:
        how += f"; an empty Enter (or `default`) keeps `{fmt(p['default'])}`"
    elif "default" in p:
        how += "; the default is not a column of this table, so pick one"
    elif not p.get("required"):
        how += "; `skip` leaves it out"
    return how + "."


def files_of_type(files: list[str], artifact: str) -> list[str]:
    """Files whose extension the artifact type claims; when none does, the files no other type claims (the
    gate reads their content). Another type's files are never offered: reads are no reference."""
    extensions = tuple(artifact_types().get(artifact, {}).get("extensions") or ())
    matching = [f for f in files if f.lower().endswith(extensions)] if extensions else []
    return matching or [f for f in files if fits(f, artifact)]


def question(p: dict, position: int, total: int, choices: list, *, current: Any = None, has_current: bool = False,
             brief: bool = False, fixing: bool = False, table_columns: list[str] | None = None) -> str:
    """The question for one parameter: name, type, default, range, description, choices and how to answer."""
    name = p["name"]
    facts = [type_text(p)] + (["required"] if p.get("required") else [] if "default" in p else ["optional"])
    keeps = default_fits(p, table_columns)
    if "default" in p:
        facts.append(f"default `{fmt(p['default'])}`" + ("" if keeps else ", not a column of this table"))
    if "minimum" in p or "maximum" in p:
        facts.append(range_text(p))
    lines = [f"**{position}/{total} `{name}`** ({', '.join(facts)})"]
    if not brief and p.get("description"):
        lines.append(p["description"])
    if p.get("sensitive"):
        lines.append("This value is sensitive: type it in the masked field (it never enters the chat, and stays on "
                     "this machine).")
    if has_current and not p.get("sensitive"):
        lines.append(f"Current value: `{fmt(current)}`.")
    if choices:
        if p.get("artifact") and not fixing:
            lines.append("Data files I can see:")
        lines.extend(f"{i}. `{fmt(c)}`" + (" (default)" if "default" in p and c == p["default"] else "")
                     for i, c in enumerate(choices, 1))
    elif p.get("artifact"):
        lines.append("I found no matching files in the data roots; type a path inside one.")
    if is_bounds(p) and table_columns:
        lines.append("Columns: " + ", ".join(f"`{c}`" for c in table_columns[:30]) + ".")
    lines.append(how_to_answer(p, bool(choices), keeps))
    return "\n".join(lines)


# ---- runs ----------------------------------------------------------------------------------------
def runs_text(result: dict) -> str:
    runs = result.get("runs") or []
    if not runs:
        return "There are no runs yet."
    lines = [f"Runs, newest first ({len(runs)} of {result.get('total', len(runs))}):"]
    for r in runs:
        dur = r.get("duration_s")
        lines.append(f"- `{r.get('run_id')}` {r.get('workflow')}: **{r.get('status')}**"
                     + (f", {dur:.1f} s" if isinstance(dur, (int, float)) else "")
                     + (f", started {r.get('started')}" if r.get("started") else ""))
    lines.append("`show RUN` explains one; `fork RUN name=value` drafts it again with a change.")
    return "\n".join(lines)


def explain_text(result: dict) -> str:
    """`show RUN`: the outcome, the verdict (each failing check with its value, what it means and the params to
    look at), where the run came from, the failure, the numbers that changed against a fork's parent, the key
    numbers, and the workflow's own diagnosis when its diagnostics say one (pump-probe: `contaminated` and
    what to move)."""
    lines = [f"Run `{result.get('run_id')}` ({result.get('workflow')}): **{result.get('status')}**"
             + (f" after {result['duration_s']:.1f} s" if isinstance(result.get("duration_s"), (int, float)) else "")]
    lines += verdict_lines(result.get("verdict"))
    if result.get("fork_of"):
        lines.append(f"Fork of `{result['fork_of']}`" + (f", {result['refinement']}" if result.get("refinement")
                                                          else "") + ".")
    elif result.get("refinement"):
        lines.append(f"Part of {result['refinement']}.")
    failure = result.get("failure") or {}
    if failure:
        lines.append(f"Failed in rule `{failure.get('rule')}`: {failure.get('error') or '(no message)'}")
        if failure.get("log"):
            lines.append(f"Log: `{failure['log']}`")
        if failure.get("log_tail"):
            lines.append("```\n" + "\n".join(failure["log_tail"]) + "\n```")
    changed = result.get("changed_from_parent") or []
    if changed:
        lines.append(f"Changed against `{result.get('fork_of')}`: " + ", ".join(
            f"{c['key']} {number_text(c.get('parent'))} → {number_text(c.get('value'))}" for c in changed[:8]))
    for name, numbers in (result.get("key_numbers") or {}).items():
        shown = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in numbers.items())
        lines.append(f"`{name}`: {shown}")
    for name, found in (result.get("diagnostics") or {}).items():
        said = _diagnosis(found)
        lines.append(f"Diagnostics `{name}`" + (f": {said}" if said else ""))
    return "\n".join(lines)


def verdict_lines(verdict: Any) -> list[str]:
    """The verdict of `show RUN`: its status and counts, each failing check with its measured value against its
    threshold, what failing means and the params to look at; the checks that passed in one line; why a check
    could not be measured."""
    if not isinstance(verdict, dict) or not verdict.get("status"):
        return []
    counts = str(verdict.get("summary") or "").removeprefix(f"{verdict['status']}: ")
    lines = [f"Verdict: **{verdict['status']}**" + (f" — {counts}" if counts else "")]
    for check in verdict.get("failing") or []:
        what = f"{check.get('measure')} = " if check.get("measure") else ""
        param = f" (param {check['threshold_param']})" if check.get("threshold_param") else ""
        text = (f"- `{check.get('name')}` failed: {what}{number_text(check.get('value'))}, needs {check.get('test')} "
                f"{number_text(check.get('threshold'))}{param}.")
        if check.get("says"):
            text += f" {check['says']}"
        if check.get("look_at"):
            text += " Look at " + ", ".join(f"`{p}`" for p in check["look_at"]) + "."
        lines.append(text)
    for check in verdict.get("unknown") or []:
        lines.append(f"- `{check.get('name')}` could not be measured: {check.get('reason') or 'no reason recorded'}")
    passed = [c for c in verdict.get("checks") or [] if c.get("status") == "pass"]
    if passed:
        lines.append("Passed: " + ", ".join(f"`{c.get('name')}` ({number_text(c.get('value'))})" for c in passed))
    return lines


def _diagnosis(found: Any) -> str:
    """A diagnostics file's own word and advice (its top-level `verdict` and `message` texts), cut short."""
    if not isinstance(found, dict):
        return ""
    said = [str(found[k]) for k in ("verdict", "message") if isinstance(found.get(k), str) and found[k].strip()]
    if len(said) == 2 and said[1].startswith(said[0]):
        said = said[1:]  # the message already starts with the verdict's word
    text = " — ".join(f"**{s}**" if i == 0 and len(said) == 2 else s for i, s in enumerate(said))
    return text if len(text) <= 800 else text[:799] + "…"


def fork_text(result: dict) -> str:
    return (f"The gate accepts the fork of run `{result.get('fork_of')}`. The draft is written to "
            f"`{result.get('config_path')}` (invocation `{str(result.get('invocation_id', ''))[:12]}`); "
            f"running it re-runs only {', '.join(result.get('reruns_rules') or [])} and what follows.\n{APPROVE}")


def value_text(p: dict, params: dict) -> str:
    """How `show` gives one param's value so far: set, taken from another step, its default, or open."""
    name = p["name"]
    value = params.get(name)
    if isinstance(value, dict) and "from" in value:
        return f"← `{value['from']}.{value.get('output')}`"
    if name in params:
        return "set (sensitive)" if p.get("sensitive") else f"`{fmt(value)}`"
    if "default" in p:
        return f"`{fmt(p['default'])}` (default)"
    return "not set" + (" (required)" if p.get("required") else "")


# ---- plans ---------------------------------------------------------------------------------------
def _edges(params: dict) -> list[str]:
    return [f"`{name}` ← `{v['from']}.{v.get('output')}`" for name, v in params.items()
            if isinstance(v, dict) and "from" in v]


def plan_chain_text(steps: list[dict]) -> str:
    """The chain the dialogue proposes, before its questions: each step, its workflow, what it takes."""
    lines = [f"A plan of {len(steps)} steps, one after another:"]
    for i, step in enumerate(steps, 1):
        wf = step["workflow"]
        edges = _edges(step["params"])
        lines.append(f"{i}. `{step['name']}`: **{wf.get('title')}** (`{wf.get('id')}`)"
                     + (", " + ", ".join(edges) if edges else ""))
    lines.append("I'll ask each step for what it still needs; `done` keeps the defaults of the rest, `show` "
                 "shows the plan so far.")
    return "\n".join(lines)


def plan_result_text(result: dict) -> str:
    """A plan that passed the gate: where its draft is, and its steps with the edges between them."""
    lines = [f"The gate accepts the plan. The draft is written to `{result.get('config_path')}` "
             f"(invocation `{str(result.get('invocation_id', ''))[:12]}`). Steps, in run order:"]
    for i, step in enumerate(result.get("steps") or [], 1):
        edges = [f"`{t.get('param')}` ← `{t.get('from')}.{t.get('output')}`" for t in step.get("takes") or []]
        lines.append(f"{i}. `{step.get('name')}`: {step.get('workflow')} {step.get('version')}"
                     + (", " + ", ".join(edges) if edges else ""))
    lines.append(f"{APPROVE} Or change a value with `set step.name=value` (I re-validate), add a step with "
                 "`then also …`, or `remove step NAME`.")
    return "\n".join(lines)


def plan_show_text(steps: list[dict], current: int | None) -> str:
    """The plan so far: every step's params, set, taken from another step, default or still open."""
    lines = ["The plan so far:"]
    for i, step in enumerate(steps):
        wf = step["workflow"]
        lines.append(f"Step {i + 1} `{step['name']}` ({wf.get('id')})" + (" (current)" if i == current else "") + ":")
        lines += [f"- `{p['name']}`: {value_text(p, step['params'])}" for p in wf.get("params") or []]
    return "\n".join(lines)
