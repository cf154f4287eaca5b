"""A refinement proposal: the parent run, the params that may vary and their candidate values, the budget and
the stop rule, with every point of the space gated before anything runs.

`propose` builds the points (several names make a grid, the first name varying slowest; each name's
candidates in the order given), drops the parent's own point, gates each point as a fork of the parent
(the same invocation the loop later gates as a fork of its predecessor, since only these names ever
change), and refuses the whole proposal when one point does not pass, naming it. It never runs anything
and never writes a file.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.errors import ExitCode, UserError
from snakegate.models import GateResult

MAX_POINTS = 64  # every point is gated (a DAG build each) before the person is asked: keep the wait short
DIRECTIONS = {">": "max", ">=": "max", "<": "min", "<=": "min"}


class RefineRefused(UserError):
    """The proposal cannot be made; `results` holds the gate's refusal of each point that did not pass."""

    def __init__(self, message: str, results: list[tuple[str, GateResult]] | None = None):
        super().__init__(message, ExitCode.INVALID)
        self.results = results or []


@dataclass(frozen=True)
class Point:
    n: int                      # 1-based, in the order the loop tries them
    values: dict[str, Any]      # name -> value at this point
    shown: dict[str, Any]       # the same as recorded (an x-sensitive value as its keyed hash)
    invocation_id: str          # what the gate proved for this point: the loop runs nothing else


@dataclass(frozen=True)
class Proposal:
    parent: Path
    parent_invocation_id: str | None
    workflow: str                       # the parent's workflow id ("plan" for a plan)
    names: list[str]                    # the params that may vary, in the order given
    points: list[Point]                 # every gated point, in order
    skipped: list[dict]                 # points left out ({values, why}): the parent's own
    budget_runs: int
    core_hours: float | None
    stop: dict                          # {"until": check} or {"best": check, "direction": "max"|"min"}
    check: dict                         # the check named by the stop rule: {name, test, threshold, says, params}
    cores: float = 1.0                  # cores one run may use (for the cores·hours budget)
    notes: list[str] = field(default_factory=list)

    def approval(self) -> dict:
        """What a person approves, as plain data (no time, no path): hashed into every run's record."""
        return {"parent_run": self.parent.name, "parent_invocation_id": self.parent_invocation_id,
                "workflow": self.workflow, "vary": list(self.names),
                "points": [{"n": p.n, "values": p.shown, "invocation_id": p.invocation_id} for p in self.points],
                "budget": {"runs": self.budget_runs, "core_hours": self.core_hours},
                "stop": dict(self.stop), "check": dict(self.check)}

    def runnable(self) -> list[Point]:
        """The points the budget of runs reaches, in order (a stop rule may end sooner)."""
        return self.points[: self.budget_runs]


def parse_try(text: str) -> tuple[str, Any]:
    """'name=value' -> (name, value read as YAML); a dotted name reaches a nested param or a plan step's."""
    from snakegate.config.read import parse_yaml

    key, sep, raw = text.partition("=")
    key = key.strip().removeprefix("params.")
    if not sep or not key:
        raise UserError(f"--try expects NAME=VALUE, e.g. --try 'background_roi=[24, 32, 8, 24]' (got {text!r})",
                        ExitCode.USAGE)
    if any(not part for part in key.split(".")):
        raise UserError(f"--try {text!r}: {key!r} is not a parameter name (empty part in the dotted name)",
                        ExitCode.USAGE)
    value, error = parse_yaml(raw, f"the value of --try {key}")
    if error is not None:
        raise UserError(f"{error.message}; quote the value if it is text", ExitCode.USAGE)
    return key, value


def space_of(tries: list[tuple[str, Any]]) -> dict[str, list]:
    """name -> its candidates in the order given (a repeated value counts once)."""
    space: dict[str, list] = {}
    for name, value in tries:
        candidates = space.setdefault(name, [])
        if _canonical(value) not in {_canonical(v) for v in candidates}:
            candidates.append(value)
    return space


def run_checks(run_dir: Path) -> dict[str, Any]:
    """The `evaluate:` checks of the workflow a run ran (its own copy), by name; a plan's as `<step>.<check>`."""
    from snakegate.provenance import runstore
    from snakegate.run import pinning

    invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
    if isinstance(invocation.get("steps"), dict):
        from snakegate.plan.compose import STEPS_DIR

        out = {}
        for step, spec in invocation["steps"].items():
            wf = pinning.load_copy(run_dir / STEPS_DIR / step, str((spec or {}).get("workflow")))
            out.update({f"{step}.{name}": check for name, check in wf.manifest.evaluate.items()})
        return out
    return dict(pinning.load_copy(run_dir, str(invocation.get("workflow"))).manifest.evaluate)


def value_at(invocation: dict, name: str) -> Any:
    """The value of the dotted param `name` in a run config (a plan's `<step>.<param>`), or a marker."""
    if isinstance(invocation.get("steps"), dict):
        step, _, rest = name.partition(".")
        node: Any = ((invocation["steps"].get(step) or {}).get("params") or {})
        parts = rest.split(".")
    else:
        node, parts = invocation.get("params") or {}, name.split(".")
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


_ABSENT = object()


def same(a: Any, b: Any) -> bool:
    return a is not _ABSENT and b is not _ABSENT and _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def cores_of(cores: int | str | None) -> float:
    if cores == "all" or cores is None:
        return float(os.cpu_count() or 1)
    return float(cores)


def propose(registry, settings, parent: Path, tries: list[tuple[str, Any]], budget_runs: int, *,
            until: str | None = None, best: str | None = None, core_hours: float | None = None,
            cores: int | str | None = 1) -> Proposal:
    """Gate the whole space around `parent`; raise RefineRefused (or UserError) naming what cannot be."""
    from snakegate.contract.dialect import did_you_mean
    from snakegate.run import pinning
    from snakegate.run.fork import ForkRefused, parent_invocation, plan_fork

    if not tries:
        raise UserError("refine needs a space: one or more --try NAME=VALUE", ExitCode.USAGE)
    if budget_runs < 1:
        raise UserError(f"--budget is a number of runs, at least 1 (got {budget_runs})", ExitCode.USAGE)
    if core_hours is not None and not core_hours > 0:
        raise UserError(f"--core-hours must be above 0 (got {core_hours})", ExitCode.USAGE)
    if (until is None) == (best is None):
        raise UserError("refine needs one stop rule: --until CHECK (stop at the first run that passes it) or "
                        "--best CHECK (run the budget, keep the best value)", ExitCode.USAGE)
    name = until or best
    try:
        checks = run_checks(parent)
    except pinning.PinError as exc:
        raise RefineRefused(f"run {parent.name} cannot be refined: {exc}") from None
    if name not in checks:
        if not checks:
            raise RefineRefused(f"run {parent.name}'s workflow has no `evaluate:` checks, so no stop rule can be "
                                "judged; refine a workflow whose workflow.yaml says what a good run looks like")
        close = did_you_mean(name, list(checks))
        hint = f"did you mean `{close}`?" if close else f"its checks: {', '.join(checks)}"
        raise RefineRefused(f"{'--until' if until else '--best'} {name!r} is not a check of run {parent.name}'s "
                            f"workflow; {hint}")
    check = checks[name]
    stop = {"until": name} if until else {"best": name}
    if best:
        direction = DIRECTIONS.get(check.test)
        if direction is None:
            raise RefineRefused(f"--best {name}: the check tests `{check.test}`, which has no better direction; use "
                                f"--until {name}")
        stop["direction"] = direction
    from snakegate.contract.evaluate import measure_text

    check_facts = {"name": name, "test": check.test, "output": check.output, "measure": measure_text(check),
                   "says": check.says,
                   "params": list(check.params),
                   "threshold": check.threshold if isinstance(check.threshold, (int, float))
                   else {"param": check.threshold.param}}
    base = parent_invocation(parent)
    space = space_of(tries)
    names = list(space)
    combos = list(itertools.product(*(space[n] for n in names)))
    if len(combos) > MAX_POINTS:
        raise UserError(f"the space holds {len(combos)} points ({' x '.join(str(len(space[n])) for n in names)}); "
                        f"at most {MAX_POINTS} are gated and offered at once: give fewer candidates",
                        ExitCode.USAGE)
    points: list[Point] = []
    skipped: list[dict] = []
    refused: list[tuple[str, GateResult]] = []
    problems: list[str] = []
    hidden: set[str] = set()  # x-sensitive names: the fork records their values as keyed hashes
    for combo in combos:
        values = dict(zip(names, combo))
        label = ", ".join(f"{k}={_canonical(v)}" for k, v in values.items())
        if all(same(value_at(base, k), v) for k, v in values.items()):
            skipped.append({"values": values, "why": f"the parent run {parent.name} itself"})
            continue
        changes = {k: v for k, v in values.items() if not same(value_at(base, k), v)}
        try:
            plan = plan_fork(registry, settings, parent, changes)
        except ForkRefused as exc:
            if exc.code == "no_change":
                skipped.append({"values": values, "why": f"changes no job of run {parent.name}"})
                continue
            if exc.result is not None:
                refused.append((label, exc.result))
                continue
            problems.append(f"{label}: {exc.message}")
            continue
        recorded = plan.recorded_changes or {}
        hidden.update(k for k in changes if not same(recorded.get(k, changes[k]), changes[k]))
        points.append(Point(n=len(points) + 1, values=values, shown=values, invocation_id=plan.result.invocation_id))
    if refused or problems:
        count = len(refused) + len(problems)
        lines = [f"{count} of the {len(combos)} points do not pass the gate; nothing was run"] + problems
        raise RefineRefused("; ".join(lines) if problems else lines[0], refused)
    if not points:
        raise RefineRefused(f"every point of the space is run {parent.name} itself (or changes none of its jobs): "
                            "give other candidate values")
    if hidden:
        points = [_hide(p, hidden, settings) for p in points]
        skipped = [{**s, "values": _hide_values(s["values"], hidden, settings)} for s in skipped]
    notes = []
    if len(points) > budget_runs:
        notes.append(f"the budget reaches the first {budget_runs} of {len(points)} points")
    return Proposal(parent=parent, parent_invocation_id=base.get("invocation_id"),
                    workflow=str(base.get("workflow") or "plan"), names=names, points=points, skipped=skipped,
                    budget_runs=budget_runs, core_hours=core_hours, stop=stop, check=check_facts,
                    cores=cores_of(cores), notes=notes)


def _hide_values(values: dict, hidden: set[str], settings) -> dict:
    from snakegate.provenance import secrets

    key = secrets.registry_key(settings.registry_root)
    return {k: secrets.keyed_hash(key, v) if k in hidden else v for k, v in values.items()}


def _hide(point: Point, hidden: set[str], settings) -> Point:
    """A point as shown and approved: an x-sensitive value, changed at any point, never in clear (even where it
    equals the parent's value and so is no change of that fork)."""
    return Point(n=point.n, values=point.values, shown=_hide_values(point.values, hidden, settings),
                 invocation_id=point.invocation_id)
