"""Shared by the chat app tests: fixtures, small workflows, the terminal size, pilot helpers.

The app is driven with Textual's own pilot (`app.run_test()`) at 80x24, the
size the chat must be readable at; the guided dialogue, the conversation
controller, the gate and Snakemake are the real ones. LLM tests use the
scripted OpenAI-compatible HTTP server of tests/openai_server.py through the
real OpenAIBackend.

Test modules import the fixtures from here (pytest finds fixtures in a
module's namespace); tests/ and tests/tui are on sys.path under pytest's
default import mode.
"""

from __future__ import annotations

import html
import io
import json
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow, one_rule_workflow
from snakegate.commands.chat_cmds import build_app
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

SECRET = "tok-9f8e7d6c5b4a"
SIZE = (80, 24)

# A workflow with one sensitive param; its one job writes a note (never the token).
API_NOTE = note_workflow("api-note", "API note",
                         "Writes a note with an API token that must never be shown or sent to a model.",
                         {"token": TOKEN_PARAM, "label": LABEL_PARAM})


# Runs for a minute unless cancelled.
SLOW_NOTE = one_rule_workflow("slow-note", "Slow note", "Waits a minute, then writes a note.",
                      "sleep 60 && echo {params.label} > {output.note}")
# Fails with a message of its own on stderr, as a real script would.
BROKEN_NOTE = one_rule_workflow("broken-note", "Broken note", "Always fails, saying why.",
                        # the message is put together at run time: it appears nowhere in the Snakefile
                        "python3 -c 'import sys; sys.exit(chr(86) + \\\"alueError: column weight is missing\\\")'")


@pytest.fixture
def chat_registry(tmp_path) -> Path:
    """tabular-profile, api-note, slow-note, broken-note and the demo tables, in a git repository whose
    user is Ada Tester."""
    return make_registry(tmp_path / "registry", {"api-note": API_NOTE, "slow-note": SLOW_NOTE,
                                                 "broken-note": BROKEN_NOTE}, with_git=True)


@pytest.fixture
def make_app(chat_registry):
    """Factory: the app exactly as `snakegate chat` builds it (guided unless a model/base_url is given); the
    registry is loaded after the first paint, as the command does."""

    def make(*, guided: bool = True, model: str | None = None, base_url: str | None = None,
             approved_by: str = "Ada Tester", **backend_opts):
        settings = load_settings(chat_registry)
        return build_app(lambda: Registry.load(chat_registry), settings, guided=guided, model=model,
                         base_url=base_url, approved_by=approved_by, conversation_id="c-tui-test", **backend_opts)

    return make


async def wait_until(pilot, predicate, timeout: float = 30.0, what: str = "the condition") -> None:
    """Let the app process messages until `predicate()` holds (workers run in threads)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.05)
    await pilot.pause()


async def connected(pilot) -> None:
    """Wait until the registry is loaded and the greeting is shown."""
    await wait_until(pilot, lambda: pilot.app.conversation is not None and pilot.app._connected.is_set(),
                     what="the registry to load")


async def say(pilot, text: str, timeout: float = 60.0) -> None:
    """Type a message, send it, and wait until the turn is on screen."""
    app = pilot.app
    prompt = app.query_one("#prompt")
    prompt.value = text
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.thinking and app.focused is prompt, timeout, f"the answer to {text!r}")


async def draft_penguins(pilot) -> None:
    """The guided dialogue to a tabular-profile draft of the penguins table, defaults for the rest."""
    await connected(pilot)
    await say(pilot, "profile a csv table")
    await say(pilot, "data/examples/tabular-penguins.csv")
    await say(pilot, "done")


async def type_secret(pilot, param: str, value: str, timeout: float = 60.0) -> None:
    """Type a sensitive value into the panel's masked field and press Enter; wait for the turn it starts."""
    app = pilot.app
    await wait_until(pilot, lambda: bool(app.query(f"#secret-{param}")), what=f"the masked field for {param}")
    field = app.query_one(f"#secret-{param}")
    field.focus()
    field.value = value
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.thinking, timeout, f"the turn after setting {param}")


async def approve_and_wait(pilot, timeout: float = 300.0) -> str:
    """ctrl+r, then wait for the run to end; returns the run panel's text."""
    app = pilot.app
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: app.running, 30, "the run to start")
    await wait_until(pilot, lambda: not app.running, timeout, "the run to finish")
    return text_of(app.query_one("#run-status"))


def assistant_texts(app) -> list[str]:
    """What the assistant said in the transcript, oldest first, as the Markdown it was given."""
    return [w.source for w in app.query("#transcript > .assistant")]


def text_of(widget) -> str:
    """What a Static shows, as plain text (a Rich renderable such as the params table is rendered first)."""
    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def screen_lines(app) -> str:
    """The screen as plain text, line by line, as a terminal shows it."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None,
                      force_terminal=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def screen_text(app) -> str:
    """Everything on screen as plain text: the SVG screenshot without its markup (lines run together)."""
    svg = app.export_screenshot()
    body = svg.split("</style>", 1)[-1]
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")


def write_run(root: Path, run_id: str, *, params: dict | None = None, prov: dict | None = None,
              **record) -> Path:
    """A run folder as the runner leaves it (run.json, invocation.json, optionally prov.json), with fixed
    times and ids, for history tests and snapshots that must not depend on the clock."""
    run_dir = root / "runs" / run_id
    (run_dir / "results").mkdir(parents=True)
    record = {"run_id": run_id, "version": "1.0.0", "invocation_id": run_id.rsplit("-", 1)[-1] * 8,
              "stage": "finished", **record}
    (run_dir / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True))
    invocation = {"invocation": {"workflow": record.get("workflow"), "version": record["version"],
                                 "params": params or {}}, "invocation_id": record["invocation_id"]}
    (run_dir / "invocation.json").write_text(json.dumps(invocation, indent=2, sort_keys=True))
    if prov is not None:
        (run_dir / "prov.json").write_text(json.dumps(prov))
    return run_dir


def history_rows(screen) -> list[str]:
    """The run ids the history table lists, top to bottom."""
    from textual.widgets import DataTable

    table = screen.query_one("#runs", DataTable)
    return [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]


async def open_history(pilot) -> None:
    """Wait for the registry, press ctrl+o, wait until the history lists its runs."""
    from snakegate.tui.history import HistoryScreen

    app = pilot.app
    await connected(pilot)
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and history_rows(app.screen),
                     what="the history to list runs")



async def run_fork_and_diff(pilot, change: str = "missing_strategy=fill_mean") -> tuple[str, str]:
    """From an approvable draft on the panel: ctrl+r -> the run succeeds -> the history lists it -> f with
    `change` -> the fork's draft -> ctrl+r -> it succeeds -> the history's diff of the two shows just that
    param. Returns (parent run id, fork run id)."""
    from snakegate.tui.dialogs import AskChange
    from snakegate.tui.history import DiffScreen

    app = pilot.app
    name, value = change.split("=", 1)
    status = await approve_and_wait(pilot)
    assert status.startswith("✓ succeeded"), status
    parent = status.splitlines()[1].removeprefix("run ")

    await open_history(pilot)
    assert history_rows(app.screen)[0] == parent
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the fork question")
    await pilot.press(*change)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.screen is app.screen_stack[0] and not app.thinking
                     and app.shown_draft is not None and app.shown_draft.fork is not None, 60, "the fork's draft")
    assert f"fork of {parent}: {name} → {value}" in text_of(app.query_one("#draft-summary"))
    assert text_of(app.query_one("#draft-status")).startswith("● Ready")  # approved like any draft

    status = await approve_and_wait(pilot)
    assert status.startswith("✓ succeeded"), status
    child = status.splitlines()[1].removeprefix("run ")

    await open_history(pilot)
    assert history_rows(app.screen)[:2] == [child, parent]
    await pilot.press("space", "down", "space", "d")
    await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen)
                     and "comparing" not in text_of(app.screen.query_one("#diff")), 60, "the diff")
    diff = text_of(app.screen.query_one("#diff"))
    assert f"{parent}  →  {child}" in diff
    assert "Parameters (1 changed)" in diff and f"params.{name}: remove → {value}" in diff
    return parent, child


def assert_only_downstream_reran(registry: Path, parent: str, child: str) -> dict:
    """The fork's record names its parent and change, and only the jobs downstream of missing_strategy ran."""
    record = json.loads((registry / "runs" / child / "run.json").read_text())
    assert record["parent_run"] == parent and record["fork_changes"] == {"missing_strategy": "fill_mean"}
    executed = set(record["jobs_executed"])
    assert "load" not in executed and {"clean", "profile", "plot"} <= executed  # only what is downstream
    return record
