"""The draft panel never calls a draft that differs from the request "ready": the difference is shown above
the approve button, and the button says it approves the draft as drafted (issue 26 §1).

Textual's pilot at 80x24, the scripted OpenAI-compatible server, the real OpenAIBackend and the real gate.
"""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, connected, say, text_of
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from openai_server import DEFAULT_MODEL, ScriptedOpenAI, act, says

PENGUINS = "data/examples/tabular-penguins.csv"


def panel_after(make_app, request: str, params: dict):
    server = ScriptedOpenAI([act("native", "validate_params", {"workflow": "tabular-profile", "params": params}),
                             says("native", "The draft is ready.")])
    app = make_app(guided=False, model=DEFAULT_MODEL, base_url=server.start(), tool_mode="native")

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await connected(pilot)
            await say(pilot, request)
            differs = app.query_one("#draft-differs")
            button = app.query_one("#approve")
            return (text_of(app.query_one("#draft-status")), differs.display, text_of(differs),
                    str(button.label), differs.region.y < button.region.y or not differs.display)

    try:
        return asyncio.run(scenario())
    finally:
        server.stop()


def test_a_draft_that_dropped_a_stated_column_shows_why_above_the_approve_button(make_app):
    # the model's own column list stands (what it leaves out is filled from the request)
    status, shown, text, label, above = panel_after(
        make_app, f"profile {PENGUINS} with only the columns species and body_mass_g",
        {"dataset_file": PENGUINS, "columns": ["species"]})
    assert status.startswith("▲ Differs from your request") and "Ready" not in status
    assert shown and "you asked for columns species, body_mass_g; the draft keeps only species" in text
    assert label == "Approve as drafted (ctrl+r)" and above


def test_a_faithful_draft_is_ready_with_no_note_on_the_panel(make_app):
    status, shown, text, label, _ = panel_after(
        make_app, f"profile {PENGUINS} with only the columns species and body_mass_g",
        {"dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]})
    assert status.startswith("● Ready") and not shown and text == ""
    assert label == "Approve and run (ctrl+r)"
