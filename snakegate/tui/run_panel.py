"""The run panel: the run of an approved draft — its progress while it goes, its outcome when it ends; for an
approved refinement, each point's progress in turn and the table of variants at the end.

Owns presentation only: the app tells it what to show on the UI thread.
Docked at the bottom of the right-hand column so that at 80x24 the progress,
the outcome, a failure's real error and the tail of its log are on screen
without scrolling. Wording lives in present_runs.py.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from snakegate.tui import present_runs


class RunPanel(Vertical):
    """Title, progress bar + step, outcome lines (hidden until the first run)."""

    CANCEL = "ctrl+c cancels the run"
    hint = CANCEL  # a refinement's point says what its cancel does

    def compose(self) -> ComposeResult:
        yield Static("", id="run-title", markup=False)
        yield ProgressBar(id="run-progress", total=None, show_eta=False, show_percentage=False)
        yield Static("", id="run-status", markup=False)

    def started(self, title: str, hint: str = CANCEL) -> None:
        self.display = True
        self.hint = hint
        self.query_one("#run-title", Static).update(title)
        bar = self.query_one("#run-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self._status("running", ["starting Snakemake…", self.hint])

    def progressed(self, done: int, total: int | None, rule: str | None) -> None:
        self.query_one("#run-progress", ProgressBar).update(total=total, progress=done)
        self._status("running", [present_runs.progress_text(done, total, rule), self.hint])

    def point(self, title: str, lines: list[str]) -> None:
        """A refinement's next point started: its own progress from zero."""
        self.query_one("#run-title", Static).update(title)
        bar = self.query_one("#run-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self._status("running", lines)

    def cancelling(self) -> None:
        self._status("running", ["cancelling: Snakemake is stopping its jobs…"])

    def finished(self, status: str, lines: list[str]) -> None:
        bar = self.query_one("#run-progress", ProgressBar)
        if status == "succeeded" and bar.total is not None:
            bar.update(progress=bar.total)
        else:  # a bar stuck part-way (or still pulsing) says less than the lines below
            bar.display = False
        self._status(status, lines)

    def refused(self, lines: list[str]) -> None:
        self.display = True
        self.query_one("#run-title", Static).update("Run")
        self.query_one("#run-progress", ProgressBar).display = False
        self._status("refused", lines)

    def _status(self, status: str, lines: list[str]) -> None:
        widget = self.query_one("#run-status", Static)
        widget.update("\n".join(lines))
        widget.set_classes(status)
