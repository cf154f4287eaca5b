"""Shared by the chat app tests: fixtures, a workflow with a sensitive param, the terminal size, pilot helpers.

The app is driven with Textual's own pilot (`app.run_test()`); the guided
dialogue, the conversation controller, the gate and (in one test) Snakemake
are the real ones. LLM tests use the scripted OpenAI-compatible HTTP server of
tests/openai_server.py through the real OpenAIBackend.

Test modules import the fixtures from here (pytest finds fixtures in a
module's namespace); tests/ and tests/tui are on sys.path under pytest's
default import mode.
"""

from __future__ import annotations

import html
import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow
from snakegate.commands.chat_cmds import build_app
from snakegate.registry import Registry
from snakegate.settings import load_settings

SECRET = "tok-9f8e7d6c5b4a"
SIZE = (120, 40)

# A workflow with one sensitive param; it is validated (and its DAG built) but never run here.
API_NOTE = note_workflow("api-note", "API note",
                         "Writes a note with an API token that must never be shown or sent to a model.",
                         {"token": TOKEN_PARAM, "label": LABEL_PARAM})


@pytest.fixture
def chat_registry(tmp_path) -> Path:
    """tabular-profile + api-note + the demo tables, in a git repository whose user is Ada Tester."""
    return make_registry(tmp_path / "registry", {"api-note": API_NOTE}, with_git=True)


@pytest.fixture
def make_app(chat_registry):
    """Factory: the app exactly as `snakegate chat` builds it (guided unless a model/base_url is given)."""

    def make(*, guided: bool = True, model: str | None = None, base_url: str | None = None,
             approved_by: str = "Ada Tester"):
        settings = load_settings(chat_registry)
        return build_app(Registry.load(chat_registry), settings, guided=guided, model=model, base_url=base_url,
                         approved_by=approved_by, conversation_id="c-tui-test")

    return make


async def wait_until(pilot, predicate, timeout: float = 30.0, what: str = "the condition") -> None:
    """Let the app process messages until `predicate()` holds (workers run in threads)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.05)
    await pilot.pause()


async def say(pilot, text: str, timeout: float = 60.0) -> None:
    """Type a message, send it, and wait until the turn is on screen."""
    app = pilot.app
    prompt = app.query_one("#prompt")
    prompt.value = text
    await pilot.press("enter")
    # the turn is over when the input is back: enabled and focused (so screenshots see the same cursor)
    await wait_until(pilot, lambda: not app.thinking and app.focused is prompt, timeout, f"the answer to {text!r}")


def text_of(widget) -> str:
    """What a Static shows, as plain text (a Rich renderable such as the params table is rendered first)."""
    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(content)
    return console.export_text()


def screen_text(app) -> str:
    """Everything on screen as plain text: the SVG screenshot without its markup (lines run together)."""
    svg = app.export_screenshot()
    body = svg.split("</style>", 1)[-1]
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")

