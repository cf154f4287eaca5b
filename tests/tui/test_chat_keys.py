"""The chat from the keyboard at 80x24, with the guided dialogue: an empty Enter keeps the default the screen
shows, Tab never takes the focus from the input, PageUp/PageDown scroll the transcript while the input keeps
the focus, the open question with what the request set and the `back`/`done` words stays in view above the
input, and the approver is on the panel before ctrl+r.

Textual's pilot with the real conversation, guided dialogue and gate; nothing runs.
"""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, connected, draft_penguins, say, screen_lines, text_of, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)

PENGUINS = "data/examples/tabular-penguins.csv"


def researcher_lines(app) -> list[str]:
    from snakegate.tui.transcript import Researcher

    return [w.said for w in app.query(Researcher)]


def asking(app) -> str:
    return text_of(app.query_one("#asking"))


def test_empty_enter_keeps_the_default_the_line_above_the_input_shows(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "profile my penguins table")
            assert "`missing_strategy` (tabular-profile): empty Enter keeps `remove`" in asking(app)
            turns = app.turn
            await pilot.press("enter")  # the input is empty
            await wait_until(pilot, lambda: app.turn > turns and not app.thinking, what="the empty Enter's turn")
            assert researcher_lines(app)[-1] == "(empty Enter: keep the default `remove`)"
            assert "`drop_duplicates` (tabular-profile)" in asking(app)
            await say(pilot, "done")
            draft = app.conversation.draft
            assert draft is not None and draft.params["dataset_file"] == PENGUINS
            assert draft.params.get("missing_strategy", "remove") == "remove"

    asyncio.run(scenario())


def test_empty_enter_without_an_open_question_sends_nothing(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            turns = app.turn
            await pilot.press("enter")
            await pilot.pause()
            assert app.turn == turns and researcher_lines(app) == []
            assert not app.query_one("#asking").display

    asyncio.run(scenario())


def test_the_open_question_what_the_request_set_and_back_done_stay_in_view_at_80x24(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "profile my penguins table")
            await say(pilot, "help")  # a long answer: the transcript scrolls, the line above the input does not
            line = app.query_one("#asking")
            assert line.display and line.region.bottom <= app.query_one("#prompt").region.y
            shown = screen_lines(app)
            for part in ("`missing_strategy`", "from your request:", "dataset_file =", "back: previous",
                         "done: defaults"):
                assert part in shown, (part, shown)

    asyncio.run(scenario())


def test_tab_keeps_the_focus_on_the_input_with_a_draft_on_the_panel(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            prompt = app.query_one("#prompt")
            await pilot.press("tab", "tab", "x")
            assert app.focused is prompt and prompt.value == "x"
            await pilot.press("backspace", "enter")  # an empty Enter after Tab approves nothing
            await pilot.pause()
            assert not app.running and app.used == {}

    asyncio.run(scenario())


def test_page_up_and_down_scroll_the_transcript_while_the_input_keeps_the_focus(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            await say(pilot, "help")
            transcript = app.transcript
            await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0,
                             what="the transcript to follow the conversation")
            bottom = transcript.scroll_y
            await pilot.press("pageup")
            await pilot.pause()
            assert transcript.scroll_y < bottom and app.focused is app.query_one("#prompt")
            await pilot.press("pagedown")
            await pilot.pause()
            assert transcript.scroll_y == bottom

    asyncio.run(scenario())


def test_the_approver_is_on_the_panel_before_ctrl_r(make_app):
    app = make_app(approved_by="Grace Hopper")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            assert not app.running and app.used == {}
            assert "approver: Grace Hopper" in screen_lines(app)

    asyncio.run(scenario())
