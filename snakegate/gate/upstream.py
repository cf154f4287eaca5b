"""An input that an earlier step of a plan will produce: it stands in for a file at the gate.

A plan's step may take an `x-artifact` param from an earlier step's declared output
(`{from: clean, output: cleaned}`). Nothing exists yet when the plan is gated, so the plan gate
(snakegate.plan.prove) hands the step's gate an `Upstream` in the file's place: the output's
declared type (which must be the param's `x-artifact` type), its declared columns (what
`x-column-of` and the preflight's header view are checked against), and where it comes from.
Plain data; nothing here reads or writes.
"""

from __future__ import annotations

from dataclasses import dataclass

PLACEHOLDER = "plan-output:"  # the param's value while the step is gated: plan-output:<step>/<output>


@dataclass(frozen=True)
class Upstream:
    step: str
    output: str
    type: str
    columns: tuple[str, ...] | None  # None: the output declares none (a table param can then not be checked)

    @property
    def placeholder(self) -> str:
        return f"{PLACEHOLDER}{self.step}/{self.output}"

    @property
    def shown(self) -> str:
        return f"step {self.step}'s output `{self.output}`"

    def view(self) -> dict:
        """What a preflight may know of it: its type and declared columns; no size, rows, profile or cells
        (it does not exist yet: a preflight must let the run-time checks speak for its contents)."""
        view = {"type": self.type, "size_bytes": None, "declared": True}
        if self.columns is not None:
            absent = f"{self.shown} does not exist until the plan runs; its contents are checked then"
            view.update({"columns": list(self.columns), "rows": None, "profile": None, "profile_absent": absent,
                         "cells": None, "cells_absent": absent, "malformed": None})
        return view


def compatible(param_type: str, output_type: str) -> bool:
    """Whether a param of `param_type` can take an output of `output_type` (one rule, shared with the
    registry's links: snakegate.contract.artifacts.takes)."""
    from snakegate.contract import artifacts

    return artifacts.takes(param_type, output_type)
