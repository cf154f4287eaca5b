"""A first run asks once who approves when the only name is the machine's git name: the answer is what the run
records, the same chat does not ask again, and the next chat finds it remembered (runs Snakemake once)."""

from __future__ import annotations

import asyncio
import json

from chat_pilot import SIZE, draft_penguins, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.registry import approver
from snakegate.tui.dialogs import AskChange, Confirm


def test_a_first_run_asks_once_when_the_only_identity_is_the_machines_git_name(make_app, chat_registry):
    who = approver.resolve(chat_registry)  # as `snakegate chat` resolves it: git's user.name, nothing remembered
    assert who.machine_only
    app = make_app(approved_by=who.name, approver_asks=who.machine_only)
    recorded = {}

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: isinstance(app.screen, AskChange), what="the approver question")
            assert not app.running  # nothing runs before the answer
            app.screen.query_one("#answer").value = "Ada Lovelace"
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.running, 30, "the run to start")
            await wait_until(pilot, lambda: not app.running, 300, "the run to finish")
            (run_id, status), = app.used.values()
            recorded.update(status=status, run=json.loads((chat_registry / "runs" / run_id / "run.json").read_text()))
            await pilot.press("ctrl+r")  # the same draft again: only the repeat question, never the name again
            await wait_until(pilot, lambda: isinstance(app.screen, Confirm), what="the repeat question")
            await pilot.press("escape")

    asyncio.run(scenario())
    assert recorded["status"] == "succeeded"
    assert recorded["run"]["origin"]["approved_by"] == "Ada Lovelace"
    assert approver.resolve(chat_registry) == approver.Approver("Ada Lovelace", "remembered")
