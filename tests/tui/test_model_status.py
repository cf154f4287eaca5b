"""The chat says what the model is doing: the header names the tool mode and why, and while the model is slow
the line above the input counts the seconds and the step of the turn; Esc during the wait abandons it.

The real app under Textual's pilot, the real OpenAIBackend and the project's scripted OpenAI-compatible HTTP
server (tests/openai_server.py), made to answer slowly where the test needs a wait.
"""

from __future__ import annotations

import asyncio
import re
import threading

from textual.widgets import Input

from chat_pilot import SIZE, connected, screen_lines, text_of, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call, refuse, says
from silent_server import SilentServer

NO_TOOL_CALLS = {"chat_template_caps": {"supports_tool_calls": False}}
WAITING = re.compile(r"⧗ waiting (?P<seconds>\d+) s · step (?P<step>\d+) of 8 · Esc stops it")


def _run(server: ScriptedOpenAI, scenario) -> None:
    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_the_header_names_the_tool_mode_auto_chose_and_why_before_the_first_message(make_app):
    server = ScriptedOpenAI([], props=NO_TOOL_CALLS)
    base_url = server.start()
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=base_url)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await wait_until(pilot, lambda: app.sub_title.startswith("json"), 15, "the header to name the tool mode")
            assert app.sub_title == (f"json — the server says it cannot call tools (/props) · {DEFAULT_MODEL} @ "
                                     f"{base_url}")
            screen = screen_lines(app)
            assert "snakegate chat — json — the server says it" in screen.splitlines()[0]
            # the header is cut at 80 columns; the transcript says the whole reason once
            await wait_until(pilot, lambda: "cannot call tools (/props)" in screen_lines(app), 5, "the mode's note")
            notes = [text_of(n) for n in app.query("#transcript > .note")]
            assert notes == ["◆ tool mode json — the server says it cannot call tools (/props)"]
            assert server.requests == []  # asking the mode is no chat request

    _run(server, scenario)


def test_a_configured_tool_mode_is_named_as_configured(make_app):
    server = ScriptedOpenAI([], props=NO_TOOL_CALLS)  # the server would say json: the setting wins
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start(), tool_mode="native")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            assert app.sub_title == f"native — as configured (tool_mode) · {DEFAULT_MODEL} @ {server.base_url}"

    _run(server, scenario)


def test_a_server_that_refuses_tools_turns_the_header_to_json_and_the_transcript_says_why(make_app):
    server = ScriptedOpenAI([refuse(400, "tools param requires --jinja flag"), says("json", "Hello.")])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await wait_until(pilot, lambda: app.sub_title.startswith("native"), 15, "the first tool mode")
            app.query_one("#prompt", Input).value = "hello"
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.thinking and "Hello." in screen_lines(app), 15, "the answer")
            await wait_until(pilot, lambda: app.sub_title.startswith("json"), 5, "the header to follow")
            assert app.sub_title.startswith("json — the server refused tool definitions · ")
            notes = [text_of(n) for n in app.query("#transcript > .note")]
            assert notes == ["◆ tool mode native — the server does not say whether it can call tools; native tried "
                             "first", "◆ tool mode json — the server refused tool definitions"]

    _run(server, scenario)


def test_the_waiting_line_counts_the_seconds_and_the_steps_while_the_model_is_slow(make_app):
    server = ScriptedOpenAI([[call("search_workflows", {"query": "csv"})], "tabular-profile fits."], delay=3)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            line = app.query_one("#waiting")
            shown = lambda: text_of(line) if line.display else ""  # noqa: E731
            assert shown() == ""
            app.query_one("#prompt", Input).value = "profile my penguins table"
            await pilot.press("enter")
            await wait_until(pilot, lambda: WAITING.fullmatch(shown()), 15, "the waiting line")
            first = WAITING.fullmatch(shown())
            assert first["step"] == "1"
            # the seconds move while the same request is out (the tick reads the clock, not the server)
            await wait_until(pilot, lambda: (m := WAITING.fullmatch(shown())) is not None and m["step"] == "1"
                             and int(m["seconds"]) > int(first["seconds"]), 15, "the seconds to count up")
            await wait_until(pilot, lambda: (m := WAITING.fullmatch(shown())) is not None and m["step"] == "2",
                             15, "the second step's wait")
            assert "⧗ waiting" in screen_lines(app)
            await wait_until(pilot, lambda: not app.thinking, 15, "the answer")
            await wait_until(pilot, lambda: shown() == "", 5, "the line to go")

    _run(server, scenario)

def test_the_history_opened_while_the_model_is_slow_leaves_the_wait_going_and_the_mode_is_noted_behind_it(
        make_app):
    from snakegate.tui.history import HistoryScreen

    server = ScriptedOpenAI(["tabular-profile fits."], delay=2.5, props=NO_TOOL_CALLS)
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await pilot.press("ctrl+o")  # before the server's tool mode is known: it arrives behind the history
            await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), 5, "the history")
            await wait_until(pilot, lambda: app.sub_title.startswith("json"), 15, "the tool mode")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HistoryScreen), 5, "the chat again")
            assert "◆ tool mode json" in screen_lines(app)

            app.query_one("#prompt", Input).value = "profile my penguins table"
            await pilot.press("enter")
            line = app.query_one("#waiting")
            await wait_until(pilot, lambda: line.display, 15, "the waiting line")
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), 5, "the history")
            await wait_until(pilot, lambda: not app.thinking, 15, "the answer, with the history open")
            await pilot.press("escape")
            await wait_until(pilot, lambda: "tabular-profile fits." in screen_lines(app), 5, "the answer")
            await wait_until(pilot, lambda: not line.display, 5, "the waiting line to go")


def test_esc_while_the_model_is_slow_abandons_the_step_and_the_next_request_carries_nothing_of_it(make_app):
    release = threading.Event()

    def never_in_time(body):  # the second step's answer comes only after the test is over
        release.wait(30)
        return "too late"

    server = ScriptedOpenAI([[call("search_workflows", {"query": "csv"})], never_in_time, "Hello again."])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start())

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            prompt = app.query_one("#prompt", Input)
            line = app.query_one("#waiting")
            prompt.value = "profile my penguins table"
            await pilot.press("enter")
            await wait_until(pilot, lambda: "step 2 of 8" in text_of(line) and line.display, 15,
                             "the wait for the second step")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.thinking, 5, "the turn to stop")
            await wait_until(pilot, lambda: not line.display, 5, "the waiting line to go")
            assert "■ stopped" in screen_lines(app)
            assert prompt.value == "profile my penguins table"

            prompt.value = "hello"
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.thinking, 15, "the next answer")
            assert "Hello again." in screen_lines(app)

    try:
        _run(server, scenario)
    finally:
        release.set()
    # the abandoned turn's step (its search and its result) is not in the next request
    last = server.requests[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == ["hello"]
    assert not any(m["role"] in ("tool", "assistant") for m in last)


def test_esc_hangs_up_on_a_server_still_generating_so_it_stops_working_for_nobody(make_app):
    server = SilentServer()
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.base_url, tool_mode="native", timeout=120)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            app.query_one("#prompt", Input).value = "profile my penguins table"
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.query_one("#waiting").display, 15, "the wait")
            assert server.request_lines == ["POST /v1/chat/completions HTTP/1.1"] and not server.hung_up.is_set()
            await pilot.press("escape")
            await wait_until(pilot, server.hung_up.is_set, 10, "the server to see the chat hang up")
            assert not app.thinking
            notes = [text_of(n) for n in app.query("#transcript > .note")]
            assert notes[-1] == "■ stopped: the request to the model is abandoned and nothing of it is kept"

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_a_status_tick_that_falls_after_the_chat_ended_does_nothing(make_app):
    app = make_app()  # the tick runs every half second; one can fall between the widgets' removal and the end

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)

    asyncio.run(scenario())
    app._show_status()  # the chat's widgets are gone: no NoMatches, no traceback at quit


def test_a_long_wait_reads_as_minutes_and_seconds_and_the_line_keeps_to_one_chat_column():
    from snakegate.tui.status import waiting_text

    assert waiting_text(7.9, 1, 8) == "⧗ waiting 7 s · step 1 of 8 · Esc stops it"
    assert waiting_text(65.2, 3, 8) == "⧗ waiting 1:05 · step 3 of 8 · Esc stops it"
    assert len(waiting_text(3599, 8, 8)) <= 44  # the chat column at 80x24, less its padding (8: the chat's limit)
