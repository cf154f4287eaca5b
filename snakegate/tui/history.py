"""The history: every run of the registry, newest first; filter, open one, mark two for a diff, fork one.

`HistoryScreen` lists runs (id, workflow, status, duration, when) from the
run folders, a fork or rerun with a second line naming its parent and the
highlighted run's whole lineage under the table (snakegate.views.lineage, as
`snakegate runs` reads it); `RunScreen` shows one (status, failure, params with sensitive
values masked, outputs, who proposed and approved it, the git SHAs of its
PROV record); `DiffScreen` compares two through `provenance.compare`.
Reading runs happens in background threads (runinfo.py); the screens only
show what comes back. Forking asks for one change and hands it to the app,
which turns it into a draft to approve like any other: nothing runs from here.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from snakegate.tui import present_runs, runinfo
from snakegate.tui.background import in_thread
from snakegate.tui.dialogs import AskChange

HINT = "Enter opens a run · space marks two, d compares them · / filters"
short_run = present_runs.short_run


class HistoryScreen(Screen):
    """All runs, newest first, with a filter."""

    CSS_PATH = "history.tcss"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("space", "mark", "Mark", show=True),
        Binding("d", "diff", "Diff two"),
        Binding("f", "fork", "Fork"),
        Binding("slash", "filter", "Filter", show=False),
    ]

    def __init__(self, registry, settings):
        super().__init__()
        self.registry, self.settings = registry, settings
        self.records: list[dict] = []
        self.marked: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: workflow, status, id or date (/ to come back here)", id="filter")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static(HINT, id="history-hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "run history"
        table = self.query_one("#runs", DataTable)
        table.add_columns(" ", "when (UTC)", "workflow", "status", "time", "run")
        table.focus()
        self._load()

    @work(exclusive=True, group="history")
    async def _load(self) -> None:
        self.records = await in_thread(runinfo.list_runs, self.settings.runs_dir, name="snakegate-history")
        self._fill()

    def _fill(self) -> None:
        table = self.query_one("#runs", DataTable)
        table.clear()
        text = self.query_one("#filter", Input).value
        for record in self.records:
            if not present_runs.matches(record, text):
                continue
            run_id, workflow, status, duration, when = present_runs.history_row(record)
            mark = "●" if run_id in self.marked else " "
            parent = present_runs.made_from(record)  # a fork or a rerun: a second line names its parent
            if parent:
                workflow = Text(workflow) + Text("\n" + parent, style="italic")
            table.add_row(mark, when, workflow, status, duration, short_run(run_id), key=run_id,
                          height=2 if parent else 1)
        if not table.row_count:
            self.query_one("#history-hint", Static).update(
                "No runs match the filter." if self.records else f"No runs yet in {self.settings.runs_dir}.")
        else:
            self._hint()

    def _hint(self) -> None:
        """Under the table: what the highlighted run was made from, whole (its parent, the params it changed),
        above the keys."""
        run_id = self.current()
        record = next((r for r in self.records if r.get("run_id") == run_id), {})
        line = present_runs.made_from_line(record)
        self.query_one("#history-hint", Static).update(f"{line}\n{HINT}" if line else HINT)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.records and self.query_one("#runs", DataTable).row_count:
            self._hint()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.query_one("#runs", DataTable).focus()

    def current(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    # ---- actions ------------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_mark(self) -> None:
        run_id = self.current()
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked = (self.marked + [run_id])[-2:]  # two at most: the oldest mark goes
        row = self.query_one("#runs", DataTable).cursor_row
        self._fill()
        self.query_one("#runs", DataTable).move_cursor(row=row)

    def action_diff(self) -> None:
        pair = self.marked if len(self.marked) == 2 else self.marked + [r for r in [self.current()] if r]
        pair = list(dict.fromkeys(pair))
        if len(pair) != 2:
            self.notify("Mark two runs with space, then press d.", timeout=4)
            return
        started = {r.get("run_id"): str(r.get("started") or "") for r in self.records}
        pair.sort(key=lambda run_id: (started.get(run_id, ""), run_id))  # the older run first: A → B
        self.app.push_screen(DiffScreen(self.registry, self.settings, *pair))

    def action_fork(self) -> None:
        run_id = self.current()
        if run_id is not None:
            ask_fork(self, run_id)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(RunScreen(self.registry, self.settings, event.row_key.value))


def ask_fork(screen: Screen, run_id: str) -> None:
    """Ask for the fork's one change; the app turns the answer into a draft and goes back to the chat."""

    def answered(change: str | None) -> None:
        if change:
            screen.app.fork_run(run_id, change)

    screen.app.push_screen(AskChange(f"Fork run {run_id} with one change (the jobs it does not affect are "
                                     "reused). The fork is a new draft you approve in the chat.",
                                     "name=value, e.g. missing_strategy=fill_mean"), answered)


class RunScreen(Screen):
    """One run: status, failure, params (masked), outputs, provenance."""

    CSS_PATH = "history.tcss"
    BINDINGS = [Binding("escape", "back", "Back"), Binding("f", "fork", "Fork")]

    def __init__(self, registry, settings, run_id: str):
        super().__init__()
        self.registry, self.settings, self.run_id = registry, settings, run_id

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="run-body"):
            yield Static("reading the run…", id="run-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"run {self.run_id}"
        self.query_one("#run-body").focus()
        self._load()

    @work(exclusive=True)
    async def _load(self) -> None:
        def read():
            return runinfo.run_facts(self.registry, self.settings, runinfo.find(self.settings.runs_dir, self.run_id))

        try:
            facts = await in_thread(read, name="snakegate-run")
            text = "\n".join(present_runs.detail_lines(facts))
        except Exception as exc:  # noqa: BLE001 - a damaged or vanished run folder: say so, keep the app
            text = f"run {self.run_id} cannot be read: {exc}"
        self.query_one("#run-detail", Static).update(text)

    def action_back(self) -> None:
        self.dismiss()

    def action_fork(self) -> None:
        ask_fork(self, self.run_id)


class DiffScreen(Screen):
    """Two runs compared: parameters, outputs, JSON values."""

    CSS_PATH = "history.tcss"
    BINDINGS = [Binding("escape", "back", "Back")]

    def __init__(self, registry, settings, run_a: str, run_b: str):
        super().__init__()
        self.registry, self.settings, self.pair = registry, settings, (run_a, run_b)

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="diff-body"):
            yield Static("comparing…", id="diff", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "diff"
        self.query_one("#diff-body").focus()
        self._load()

    @work(exclusive=True)
    async def _load(self) -> None:
        def read():
            a, b = (runinfo.find(self.settings.runs_dir, r) for r in self.pair)
            return runinfo.diff(self.registry, self.settings.registry_root, a, b)

        try:
            text = "\n".join(present_runs.diff_lines(await in_thread(read, name="snakegate-diff")))
        except Exception as exc:  # noqa: BLE001 - a damaged run folder: say so, keep the app
            text = f"cannot compare {self.pair[0]} and {self.pair[1]}: {exc}"
        self.query_one("#diff", Static).update(text)

    def action_back(self) -> None:
        self.dismiss()
