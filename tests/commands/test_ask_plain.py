"""`snakegate ask` prints plain text for a terminal or a script's log (issue 29 §3): no Markdown markup, lines
that fit 80 columns, and no pointer to the chat app's panel or keys — a script is told the command that runs
the draft instead. The CLI in-process with the real guided dialogue and a real registry.
"""

from __future__ import annotations

import pytest

from registry_copies import make_registry, run_names
from snakegate.commands.plain_text import plain_lines

REQUEST = "profile data/examples/tabular-penguins.csv, fill missing values with the median"


@pytest.fixture
def asked(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = make_registry(tmp_path / "registry")
    code, out, err = cli("--registry", root, "ask", REQUEST, "--guided")
    assert code == 0, err
    return root, out


def test_ask_prints_plain_text_without_markdown_in_80_columns(asked):
    _, out = asked
    assert "**" not in out and "`" not in out and "*Approve" not in out
    assert "Tabular profile (tabular-profile 1.0.0)" in out  # was **Tabular profile** (`tabular-profile` 1.0.0)
    assert "missing_strategy" in out  # a snake_case name is not taken for markup
    assert max(len(line) for line in out.splitlines()) <= 80, out


def test_ask_tells_a_script_the_command_that_runs_the_draft_not_a_panel_key(asked):
    root, out = asked
    assert "ctrl+r" not in out.lower() and "panel" not in out and "button" not in out
    path = next(line for line in out.splitlines() if line.startswith("draft: ")).split()[1]
    assert f"run it with: snakegate run {path}" in out and "--yes" in out
    assert run_names(root) == set()  # nothing ran


def test_markdown_becomes_plain_lines_with_list_items_hanging():
    said = ("## Next\n**2/4 `missing_strategy`** (string, default `remove`)\n"
            "See [the docs](https://example.org/x) or *ask*; a_b * c stays.\n\n\n"
            "1. `fill_median` fills every numeric gap with the median of its column, computed after duplicates "
            "are dropped\nPress **ctrl+r** in the panel to run it. Or `done`.")
    assert plain_lines(said, total=60) == [
        "Next",
        "2/4 missing_strategy (string, default remove)",
        "See the docs (https://example.org/x) or ask; a_b * c stays.",
        "",
        "1. fill_median fills every numeric gap with the median of",
        "   its column, computed after duplicates are dropped",
        "Or done.",
    ]
