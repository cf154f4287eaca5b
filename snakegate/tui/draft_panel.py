"""The draft panel: the draft's state, the approve key and whose approval it records, masked fields for
sensitive params, the params. Tab never lands on the approve button or the params (a Tab then Enter must not
approve; the input keeps the focus); only the masked fields take the focus.

Owns presentation only. The app decides what can be approved and mints the
Approval; this widget is told what to show, on the UI thread. A draft that differs from
what the researcher said shows each difference above the approve button (`show_differences`). A bounded refinement
takes the draft's place (`show_refinement`): its rule, budget, every point and the
check's advice, approved with the same key. Its first lines
(state, workflow — for a plan its steps and the edges between them — and the
approve button) stay in view at 80x24; the params scroll below them. Values are shown masked where the contract marks them
`x-sensitive`, and a sensitive param is typed into a password field here,
never into the chat: submitting it posts `SensitiveEntered` for the app to
hand to the conversation out of band (a value typed into the chat for one is
moved into its field, `put_secret`, for the researcher to enter from there).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Button, Input, Static

from snakegate.tui import present
from snakegate.tui.messages import SensitiveEntered
from snakegate.tui.present_wrap import Wrapped

NO_DRAFT = ("Tell me what you want to run; once a run config passes the gate it appears here for you to "
            "review and approve.")


class DraftPanel(Vertical):
    """State line; workflow + invocation; Approve and run; sensitive fields; params; config file."""

    def compose(self) -> ComposeResult:
        yield Static(present.draft_status("none"), id="draft-status", classes="none", markup=False)
        yield Static(NO_DRAFT, id="draft-summary", markup=False)
        yield Static("", id="draft-differs", markup=False)  # what the draft did not take from the request
        # Never focused by Tab: a Tab then Enter typed out of habit must not approve, and the input keeps the
        # focus (the button still takes a click; ctrl+r is the key)
        approve = Button("Approve and run (ctrl+r)", id="approve", variant="success", disabled=True, compact=True)
        approve.can_focus = False
        yield approve
        yield Static("", id="approver", markup=False)  # who ctrl+r approves as, shown before it is pressed
        yield Vertical(id="secrets")
        with VerticalScroll(id="draft-body", can_focus=False):  # the wheel scrolls it; the focus stays put
            yield Static("", id="draft-params")
            yield Static("", id="draft-config", markup=False)

    # ---- state ----------------------------------------------------------------------------------------------

    def set_state(self, state: str, text: str) -> None:
        """The first line: none | pending | ready | running | used | withdrawn | blocked (why ctrl+r did nothing)."""
        status = self.query_one("#draft-status", Static)
        status.update(text)
        status.set_classes(state)

    def set_approver(self, text: str) -> None:
        self.query_one("#approver", Static).update(text)

    def set_approvable(self, enabled: bool, label: str = "Approve and run (ctrl+r)") -> None:
        button = self.query_one("#approve", Button)
        button.disabled = not enabled
        button.label = label

    # ---- the draft ------------------------------------------------------------------------------------------

    def show_draft(self, draft, schema: dict | None, root: Path, fork_note: str | None = None,
                   schema_of=None) -> None:
        """A new draft replaces the previous one on screen (the controller already replaced it). A plan
        shows its steps and edges first, then each step's params (`schema_of(workflow id)` gives each
        step's contract, for masking)."""
        # a community workflow may paste a free-text param into a shell command: its value is marked (the
        # workflow is parsed once per version, never run)
        from snakegate.check.shellquote import exposed_in_folder

        def exposed_of(workflow: str, contract: dict | None) -> frozenset[str]:
            return exposed_in_folder(root / "workflows" / workflow, contract)

        # a fork's draft holds its parent's resolved (absolute) paths: shown relative, as its parent's draft was
        roots = tuple(dict.fromkeys((str(root), str(Path(root).resolve()))))
        if getattr(draft, "plan", None) is not None:
            self.query_one("#draft-summary", Static).update(present.plan_summary(draft))
            parts: list = []  # per step: its heading on a line of its own (never folded), then its params
            for name, shown, heading in present.plan_param_rows(draft.plan, schema_of or (lambda _wf: None),
                                                                exposed_of, roots):
                if heading:
                    grid = _params_grid()
                    parts += [Text(f"{name}: {shown}", style="bold underline"), grid]
                else:
                    grid.add_row(Text(name), Wrapped(shown))
            self.query_one("#draft-params", Static).update(Group(*parts))
        else:
            summary = f"{draft.workflow} {draft.version}\ninvocation {present.short_id(draft.invocation_id)}"
            self.query_one("#draft-summary", Static).update(summary + (f"\n{fork_note}" if fork_note else ""))
            grid = _params_grid()
            for name, shown in present.param_lines(schema, draft.params, exposed_of(draft.workflow, schema), roots):
                grid.add_row(Text(name), Wrapped(shown))
            self.query_one("#draft-params", Static).update(grid)
        self.show_differences(getattr(draft, "differences", ()))
        self.query_one("#draft-config", Static).update(Wrapped(
            f"config: {present.relative(draft.config_path, root)}\n(also runs with snakemake --configfile)"))
        self.query_one("#draft-body").scroll_home(animate=False)

    def show_differences(self, differences) -> None:
        """Above the approve button: each thing the researcher said that the draft does not hold."""
        shown = self.query_one("#draft-differs", Static)
        shown.update(present.differences_text(differences))
        shown.display = bool(differences)  # takes no line at all when the draft is what was asked

    def show_refinement(self, lines: list[str] | tuple[str, ...], budget: int) -> None:
        """A refinement replaces the draft on screen: its rule and budget first (in view at 80x24), then every
        point, what was left out and the check's advice (snakegate.refine.text.proposal_lines' words)."""
        head, *rest = list(lines) or [""]
        self.show_differences(())
        self.query_one("#draft-summary", Static).update(head.replace("refinement of run", "Refinement of run", 1))
        self.query_one("#draft-params", Static).update(Text("\n".join(line.removeprefix("  ") for line in rest)))
        points = sum(1 for line in rest if line.lstrip()[:1].isdigit())
        self.query_one("#draft-config", Static).update(
            f"One approval runs up to {min(budget, points)} of these {points} point(s), each a fork of the run "
            "before it; nothing else can run.")
        self.query_one("#draft-body").scroll_home(animate=False)

    def clear_draft(self, text: str = NO_DRAFT) -> None:
        self.show_differences(())
        self.query_one("#draft-summary", Static).update(text)
        self.query_one("#draft-params", Static).update("")
        self.query_one("#draft-config", Static).update("")

    # ---- sensitive params -----------------------------------------------------------------------------------

    def ask_secret(self, workflow: str, param: str, value: str = "") -> None:
        """A masked field for one sensitive param (dotted when nested) of the workflow being filled."""
        box = self.query_one("#secrets", Vertical)
        if getattr(box, "workflow", None) != workflow:
            self.clear_secrets()
            box.workflow = workflow
        if any(field.param == param for field in self.query(SecretInput)):
            return
        box.mount(Static(f"{param} (sensitive): type it here", classes="secret-label", markup=False))
        box.mount(SecretInput(workflow, param, value))

    def put_secret(self, workflow: str, param: str, value: str) -> None:
        """A value typed into the chat for a sensitive param, moved into its masked field and focused: not yet
        entered (Enter there hands it over), never shown."""
        field = next((f for f in self.query(SecretInput) if f.param == param and f.workflow == workflow), None)
        if field is None:
            self.ask_secret(workflow, param, value)
        else:
            field.value = value
        self.call_after_refresh(self._focus_secret, param)

    def _focus_secret(self, param: str) -> None:
        for field in self.query(SecretInput):
            if field.param == param:
                field.focus()

    def clear_secrets(self) -> None:
        box = self.query_one("#secrets", Vertical)
        box.remove_children()
        box.workflow = None

    def secret_set(self, param: str) -> None:
        for field in self.query(SecretInput):
            if field.param == param:
                field.value = ""
                field.placeholder = f"set {present.MASK}"


def _params_grid() -> Table:
    """Names in bold, never wrapped; values wrapped to the panel's width at path separators and spaces
    (present_wrap.Wrapped), never mid-word."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


class SecretInput(Input):
    """A password field for one sensitive param; Enter hands the value to the app, then the field empties."""

    def __init__(self, workflow: str, param: str, value: str = ""):
        super().__init__(value, password=True, placeholder="hidden; never sent to the model", compact=True,
                         id="secret-" + param.replace(".", "-"), classes="secret")
        self.workflow, self.param = workflow, param

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value:
            self.post_message(SensitiveEntered(self.workflow, self.param, event.value))
