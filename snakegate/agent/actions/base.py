"""What every platform action is made of: its definition, the context it reads, and how it reports.

Owns `Action` (name + description + pydantic argument model + handler: the one
definition from which the OpenAI tool list, the constrained-JSON step schema
and the MCP tools are all derived), `ActionContext`, `Proposal` (a gated
parameter set, or a gated plan as a `PlanOutline`, that the controller turns
into a draft), `Refused` and the `{"error": {code, message, hint}}` shape. Handlers live in act_*.py and only
read; nothing in this module reads, writes or runs anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from snakegate.contract.dialect import did_you_mean
from snakegate.registry.workflows import Registry, Workflow
from snakegate.registry.settings import Settings


@dataclass
class ActionContext:
    """What actions read: the registry and settings, plus the sensitive values this conversation holds.

    `vault` keeps the real value of every sensitive param the model was given only as "<redacted>"
    (key: (workflow id, path parts below params)), so when the model sends "<redacted>" back to
    validate_params the researcher's value is used. `known_secrets` are further values that must be
    scrubbed from anything the model sees (e.g. an earlier run's sensitive params) but never fill a
    placeholder."""

    registry: Registry
    settings: Settings
    vault: dict[tuple[str, tuple], Any] = field(default_factory=dict)
    known_secrets: set[str] = field(default_factory=set)
    # The plan being built (propose_plan, add/replace/remove_step): {"plan": label | None, "steps": {name:
    # {"workflow", "params"}}} as the model wrote it (sensitive values as "<redacted>"), refused or not.
    plan: dict | None = None
    # Who is calling, for what a model writes (assess_run's annotation): {"model", "backend", "conversation"}.
    author: dict | None = None


@dataclass(frozen=True)
class ForkOrigin:
    """The earlier run a fork_run draft derives from, and what running it re-executes."""

    parent_run: str                 # run id
    parent_invocation_id: str | None
    changes: dict[str, Any]         # dotted param name -> new value (real values; redact before showing)
    changed_rules: tuple[str, ...]  # these and their downstream jobs re-run; the rest is copied from the parent
    # a recovery (recover_run): {"run": the parent, "check": its failing check, or "failure"}, recorded in run.json
    recovery_of: dict[str, str] | None = None


@dataclass(frozen=True)
class PlanStep:
    """One step of a gated plan, as its draft holds it."""

    name: str
    workflow: str
    version: str
    params: dict[str, Any]   # as given, defaults filled, real values; an input from a step as {from, output}
    takes: tuple[tuple[str, str, str], ...] = ()  # (param as written, e.g. "dataset", source step, its output)


@dataclass(frozen=True)
class PlanOutline:
    """A gated plan's steps in run order, and its label."""

    label: str | None
    steps: tuple[PlanStep, ...]

    @property
    def title(self) -> str:
        """How a plan is named where a workflow id would be: "plan <label>" (run.json's `workflow` too)."""
        return f"plan {self.label}" if self.label else "plan"


@dataclass(frozen=True)
class Proposal:
    """A parameter set (or a plan) that passed the gate: what the controller writes as the draft run config.

    A plan's proposal has `plan` set, `workflow` its title ("plan <label>"), no version and no params."""

    workflow: str
    version: str
    invocation_id: str
    params: dict[str, Any]   # as given, defaults filled, real (unredacted) values
    config_path: Path        # absolute; drafts_dir / f"{workflow}-{invocation_id[:12]}.yaml" (a plan: its label)
    fork: ForkOrigin | None = None
    plan: PlanOutline | None = None


class Refused(Exception):
    """Misuse an action reports to the model: `{"error": {code, message, hint}}`."""

    def __init__(self, code: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


def error_result(code: str, message: str, hint: str | None = None) -> dict:
    return {"error": {"code": code, "message": message, "hint": hint}}


# An optional argument a small model should not be tempted to fill: left out of the constrained-JSON step
# schema (tools.step_schema), kept in the native tool list.
RARE = {"x-rare": True}


class Args(BaseModel):
    """Base of every action's arguments: unknown arguments are refused, never ignored."""

    model_config = ConfigDict(extra="forbid")


# A handler returns (result for the model, one-line summary for the researcher, proposal or None).
Handler = Callable[[ActionContext, Any], tuple[dict, str, Proposal | None]]


@dataclass(frozen=True)
class Action:
    """One platform action, defined once. `args` documents every argument (pydantic Field descriptions)."""

    name: str
    description: str
    args: type[Args]
    run: Handler
    workflow_fields: tuple[str, ...] = ()   # arguments naming a workflow id (an enum in the step schema)


def find_workflow(ctx: ActionContext, wf_id: str) -> Workflow:
    """The workflow, or a refusal naming the closest id."""
    wf = ctx.registry.get(wf_id)
    if wf is not None:
        return wf
    ids = ctx.registry.ids()
    if wf_id in ctx.registry.broken:
        raise Refused("unknown_workflow", f"workflow `{wf_id}` cannot be loaded: {ctx.registry.broken[wf_id]}",
                      "choose another workflow; this one needs fixing by its maintainer")
    close = did_you_mean(wf_id, ids)
    raise Refused("unknown_workflow", f"there is no workflow `{wf_id}` in the registry",
                  f"did you mean `{close}`?" if close else
                  f"use an id from search_workflows (available: {', '.join(ids) or 'none'})")
