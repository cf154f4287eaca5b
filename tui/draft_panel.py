"""The right-hand panel: the current draft (what would run), its approve button, and the run's progress and result.

Owns presentation only. The app decides when the button is enabled and what
approving does (minting the Approval happens in the app, nowhere else); this
widget is told what to show, on the UI thread. Param values are shown masked
where the contract marks them `x-sensitive` (see `present.param_lines`).
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, ProgressBar, Static

from snakegate.tui import present

NO_DRAFT = ("No draft yet.\nTell me what you want to run; once a run config passes the gate it appears here "
            "for you to review and approve.")


class DraftPanel(Vertical):
    """Draft: workflow + version, invocation id, params, config file; Approve and run; the run's status."""

    def compose(self) -> ComposeResult:
        yield Static("Draft", classes="panel-title")
        yield Static(NO_DRAFT, id="draft-summary", markup=False)
        yield Static("", id="draft-params")
        yield Static("", id="draft-config", markup=False)
        yield Button("Approve and run (ctrl+r)", id="approve", variant="success", disabled=True)
        yield Static("", id="run-title", classes="panel-title", markup=False)
        yield ProgressBar(id="run-progress", total=None, show_eta=False)
        yield Static("", id="run-status", markup=False)

    # ---- the draft ------------------------------------------------------------------------------------------

    def show_draft(self, draft, schema: dict | None, root: Path) -> None:
        """A new draft replaces the previous one on screen (the controller already replaced it)."""
        self.query_one("#draft-summary", Static).update(
            f"{draft.workflow} {draft.version}\ninvocation {present.short_id(draft.invocation_id)}")
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for name, shown in present.param_lines(schema, draft.params):
            grid.add_row(Text(name), Text(shown))
        params = self.query_one("#draft-params", Static)
        params.update(grid)
        params.display = True
        config = self.query_one("#draft-config", Static)
        config.update(f"config: {present.relative(draft.config_path, root)}\n"
                      "(runs with plain snakemake --configfile too)")
        config.display = True

    def set_approvable(self, enabled: bool) -> None:
        self.query_one("#approve", Button).disabled = not enabled

    # ---- the run --------------------------------------------------------------------------------------------

    def run_started(self, draft) -> None:
        self.query_one("#run-title", Static).update(
            f"Run: {draft.workflow} {draft.version} ({present.short_id(draft.invocation_id)})")
        bar = self.query_one("#run-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        status = self.query_one("#run-status", Static)
        status.update("starting Snakemake…")
        status.set_classes("")
        for wid in ("#run-title", "#run-progress", "#run-status"):
            self.query_one(wid).display = True

    def run_progressed(self, done: int, total: int | None, rule: str | None) -> None:
        self.query_one("#run-progress", ProgressBar).update(total=total, progress=done)
        self.query_one("#run-status", Static).update(present.progress_text(done, total, rule))

    def run_finished(self, status: str, lines: list[str]) -> None:
        bar = self.query_one("#run-progress", ProgressBar)
        if status == "succeeded" and bar.total is not None:
            bar.update(progress=bar.total)
        else:  # a bar stuck part-way (or still pulsing) says less than the status lines below
            bar.display = False
        self._status(status, lines)

    def run_refused(self, lines: list[str]) -> None:
        self.query_one("#run-progress", ProgressBar).display = False
        self._status("refused", lines)

    def _status(self, status: str, lines: list[str]) -> None:
        widget = self.query_one("#run-status", Static)
        widget.update("\n".join(lines))
        widget.set_classes(status)
        widget.display = True
