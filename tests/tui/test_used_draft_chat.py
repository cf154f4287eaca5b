"""After a run the chat never calls the draft that ran "ready to approve": one approval, one run. A failed
run's summary names the failing rule and its real error, and asking to approve again, or a message that
matches no workflow, says the draft ran already.

Textual's pilot at 80x24 with the guided dialogue and a real (failing) Snakemake run: slow.
"""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, approve_and_wait, assistant_texts, connected, say, wait_until
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)


def test_after_a_failed_run_the_chat_never_says_the_used_draft_is_ready(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, "broken-note")
            await say(pilot, "done")
            status = await approve_and_wait(pilot, timeout=180)
            assert status.startswith("✗ failed"), status
            # the guided dialogue reads the failed run back in a turn of its own
            await wait_until(pilot, lambda: not app.thinking and any("failed in rule `note`" in t
                                                                     for t in assistant_texts(app)),
                             60, "the failed run's summary in the chat")
            assert "ValueError: column weight is missing" in "\n".join(assistant_texts(app))
            await say(pilot, "approve")
            assert "The draft ran already" in assistant_texts(app)[-1]
            await say(pilot, "zqxj frobnicate wibble")
            said = assistant_texts(app)[-1]
            assert "No workflow matches" in said and "ready to approve" not in said
            assert not any("still ready to approve" in t for t in assistant_texts(app))

    asyncio.run(scenario())
