"""A fork made from the chat's history reads as its parent did: its draft shows the parent's table path relative
to the registry (the fork holds the parent's resolved, absolute path), wrapped at its separators; once the fork
has run, the key numbers the chat shows start with the verdict's check and what it was in the parent. One
real run and its fork, through the pilot at 80x24 (listed in SLOW_PATHS)."""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, approve_and_wait, draft_penguins, open_history, text_of, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.dialogs import AskChange


def test_a_forks_draft_shows_paths_as_its_parent_did_and_its_numbers_start_with_the_check(make_app, chat_registry):
    app = make_app()
    seen = {}

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            seen["parent_params"] = text_of(app.query_one("#draft-params"))
            status = await approve_and_wait(pilot)
            assert status.startswith("✓ succeeded"), status
            await open_history(pilot)
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the fork question")
            await pilot.press(*"missing_strategy=fill_mean", "enter")
            await wait_until(pilot, lambda: app.screen is app.screen_stack[0] and not app.thinking
                             and app.shown_draft is not None and app.shown_draft.fork is not None, 60,
                             "the fork's draft")
            seen["fork_file"] = app.shown_draft.params["dataset_file"]
            seen["fork_params"] = text_of(app.query_one("#draft-params"))
            status = await approve_and_wait(pilot)
            assert status.startswith("✓ succeeded"), status
            seen["result"] = app.query("#transcript > .result").last().source

    asyncio.run(scenario())
    assert seen["fork_file"].startswith("/")  # the fork's config holds the parent's resolved path…
    assert "data/examples/" in seen["fork_params"] and str(chat_registry) not in seen["fork_params"]
    def table_row(params: str) -> str:
        return next(line.strip() for line in params.splitlines() if line.startswith("dataset_file"))

    assert table_row(seen["fork_params"]) == table_row(seen["parent_params"]) == \
        "dataset_file     data/examples/tabular-penguins.csv"
    numbers = seen["result"].split("Key numbers: ", 1)[1]
    assert numbers.startswith("`rows_kept = ") and "✓ (was " in numbers.split(",")[0]
