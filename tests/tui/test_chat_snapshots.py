"""Snapshots of deterministic chat screens (pytest-textual-snapshot). Update after a deliberate change with
`python -m pytest tests/tui/test_chat_snapshots.py --snapshot-update`, and look at the new SVGs first.

Nothing on these screens depends on tmp paths, ports or the clock: the guided dialogue, a fixed terminal
size, and a draft whose config path is shown relative to the registry.
"""

from __future__ import annotations

from chat_pilot import SECRET, say
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)

SNAP_SIZE = (110, 34)


def steady_cursor(pilot) -> None:
    """The input's cursor blinks every 0.5 s; a screenshot must not depend on when it was taken."""
    pilot.app.query_one("#prompt").cursor_blink = False


def test_opening_screen_with_the_guided_dialogue(snap_compare, make_app):
    assert snap_compare(make_app(), terminal_size=SNAP_SIZE, run_before=steady_cursor)


def test_draft_panel_masks_a_sensitive_value(snap_compare, make_app):
    async def fill_the_draft(pilot):
        await say(pilot, "api note")
        await say(pilot, SECRET)
        await say(pilot, "done")
        steady_cursor(pilot)

    assert snap_compare(make_app(), terminal_size=SNAP_SIZE, run_before=fill_the_draft)
