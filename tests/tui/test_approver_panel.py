"""The approver on the draft panel: named before ctrl+r, set with ctrl+t, and asked once before the first run when
the only name snakegate has is the machine's (git's user.name), then remembered for the registry. Nothing here
runs Snakemake (test_approver_first_run.py runs one)."""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, connected, draft_penguins, screen_lines, text_of, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.registry import approver
from snakegate.tui.dialogs import AskChange


def test_ctrl_t_sets_the_approver_on_the_panel_and_remembers_it_for_the_registry(make_app, chat_registry):
    app = make_app(approved_by="Ada Tester")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            assert "approver: Ada Tester (ctrl+t)" in screen_lines(app)
            await pilot.press("ctrl+t")
            await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the approver question")
            field = app.screen.query_one("#answer")
            assert field.value == "Ada Tester"  # prefilled: Enter keeps it
            field.value = "Grace Hopper"
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, AskChange), what="the dialog to close")
            assert "approver: Grace Hopper (ctrl+t)" in screen_lines(app)
            assert app.approved_by == "Grace Hopper"

    asyncio.run(scenario())
    assert approver.resolve(chat_registry) == approver.Approver("Grace Hopper", "remembered")


def test_escaping_the_first_run_question_runs_nothing_and_asks_again(make_app, chat_registry):
    app = make_app(approved_by="Ada Tester", approver_asks=True)

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            assert "(machine's name: ctrl+r asks)" in screen_lines(app)
            for _ in range(2):  # Esc answers nothing, so the next ctrl+r asks again
                await pilot.press("ctrl+r")
                await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the approver question")
                assert "only this machine's name" in str(app.screen.question)
                await pilot.press("escape")
                await wait_until(pilot, lambda: not isinstance(app.screen, AskChange), what="the dialog to close")
                assert not app.running and app.used == {}
                assert text_of(app.query_one("#draft-status")).startswith("Not approved: say who approves first")

    asyncio.run(scenario())
    assert approver.remembered(chat_registry) is None


def test_an_empty_answer_keeps_the_name_and_asks_nothing_more(make_app, chat_registry):
    app = make_app(approved_by="Ada Tester")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await pilot.press("ctrl+t")
            await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the approver question")
            app.screen.query_one("#answer").value = "   "
            await pilot.press("enter")  # an empty answer is not taken: the dialog stays until Esc
            await pilot.pause()
            assert isinstance(app.screen, AskChange)
            await pilot.press("escape")
            await pilot.pause()
            assert app.approved_by == "Ada Tester"

    asyncio.run(scenario())
    assert approver.remembered(chat_registry) is None
