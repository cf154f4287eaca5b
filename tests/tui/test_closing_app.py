"""A turn or a run that ends while the app closes finds the chat's widgets gone: its message is dropped, the app's
exit does not fail on it (seen once in CI: a guided turn's TurnFinished arrived after the draft panel was removed,
and the app ended in NoMatches)."""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, connected
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.messages import RunProgressed, TurnEvent, TurnFinished


def test_messages_that_arrive_after_the_chats_widgets_are_gone_are_dropped_without_an_error(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            assert app.chat_mounted()
            for child in list(app.screen.children):  # what closing does to the default screen, in one step
                await child.remove()
            await pilot.pause()
            assert not app.chat_mounted()
            for message in (TurnEvent(app.turn, object()), TurnFinished(app.turn, []),
                            RunProgressed(1, 2, "load")):
                app.post_message(message)
            await pilot.pause()
            await pilot.pause()

    asyncio.run(scenario())  # run_test re-raises an error the app met while handling them
