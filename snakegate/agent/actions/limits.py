"""Bounds on what a model can make snakegate do and see: caps, and paths shown without leaking the machine.

Owns the caps (tool calls per model reply, bytes of one call's arguments,
bytes of one action result, drafts written per turn, steps of a plan) and `hide_paths`, which
rewrites every absolute path in a result: registry-relative when inside the
registry, kept when inside a data root, otherwise replaced by a placeholder
(so the home folder, the working directory, /proc or a symlink's target never
reach a model). Each cap, when hit, is a refusal the model can act on.
Pure functions on plain data: nothing is read, written or sent from here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from snakegate.agent.actions.base import error_result

MAX_CALLS_PER_REPLY = 4          # a reply asking for more runs only the first ones
MAX_ARGUMENT_BYTES = 16 * 1024   # one call's JSON arguments; a run config is far smaller
MAX_RESULT_BYTES = 32 * 1024     # one result sent back to the model
MAX_DRAFTS_PER_TURN = 3          # validate_params (or fork_run) drafts written in one researcher turn
MAX_PLAN_STEPS = 12              # steps of one plan a model may build (each is gated, so each costs a gate)
OUTSIDE = "<outside the data roots>"

# An absolute path (or ~/...) inside free text: not part of a URL (://), a word or a relative path.
_PATH = re.compile(r"(?<![\w.:/~\-])(~?/[^\s`'\",;:()\[\]{}<>|]+)")


def too_many_calls(name: str, position: int) -> dict:
    return error_result("too_many_calls",
                        f"{name} was call {position} in one reply; only the first {MAX_CALLS_PER_REPLY} calls of a "
                        "reply run",
                        "send the remaining calls one at a time, after reading the results of the first ones")


def arguments_too_large(name: str, size: int) -> dict:
    return error_result("arguments_too_large",
                        f"the arguments of {name} are {size:,} bytes; the limit is {MAX_ARGUMENT_BYTES:,}",
                        "send only the parameters the workflow needs, with short values; file contents never go "
                        "in arguments, only paths inside the data roots")


def result_too_large(name: str, size: int) -> dict:
    return error_result("result_too_large",
                        f"the result of {name} is {size:,} bytes, over the {MAX_RESULT_BYTES:,}-byte limit for one "
                        "result, so it was not sent",
                        "narrow the request: a smaller limit, a sub-folder, one SKILL.md section, fewer params")


def drafts_exhausted(name: str) -> dict:
    return error_result("draft_limit",
                        f"{name} passed the gate, but this turn already wrote {MAX_DRAFTS_PER_TURN} drafts, so no "
                        "new draft was written",
                        "stop and ask the researcher which parameters they want; the next message allows new drafts")


def json_size(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, default=str).encode("utf-8"))


class PathView:
    """How paths are shown to a model: relative to the registry root, never outside the data roots."""

    def __init__(self, registry_root: Path, data_roots, home: str | None = None):
        self.root = str(Path(registry_root).resolve())
        self.roots = [str(Path(r).resolve()) for r in data_roots]
        self.home = home if home is not None else os.path.expanduser("~")

    def _shown_token(self, token: str) -> str:
        if token.startswith("~") or (self.home and self.home != "~" and token.startswith(self.home.rstrip("/") + "/")):
            return self.show(token)
        first = token.lstrip("/").split("/", 1)[0]
        if first and not os.path.lexists("/" + first):
            return token
        return self.show(token)

    def show(self, text: str) -> str:
        """One path as a model may see it."""
        path = text
        if path.startswith("~"):
            if not self.home or self.home == "~":
                return OUTSIDE
            path = self.home + path[1:]
        norm = os.path.normpath(path)
        if norm == self.root:
            return "."
        if norm.startswith(self.root + os.sep):
            return norm[len(self.root) + 1:] + ("/" if text.endswith("/") else "")
        if any(norm == r or norm.startswith(r + os.sep) for r in self.roots):
            return text
        return OUTSIDE

    def hide(self, value: Any) -> Any:
        """`value` (JSON-able) with every absolute path inside its strings shown as `show` says. A token whose
        first folder does not exist on this machine (and is not under home) is no path here and is kept: a
        JSON pointer such as `/background/ks_pvalue` in a workflow's `keys:` or `evaluate:` says nothing
        about this machine, and hiding it would garble the contract the model reads."""
        if isinstance(value, str):
            return _PATH.sub(lambda m: self._shown_token(m.group(1)), value) if "/" in value else value
        if isinstance(value, dict):
            return {self.hide(k): self.hide(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.hide(v) for v in value]
        return value
