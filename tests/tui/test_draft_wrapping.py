"""The draft panel wraps a value after a path separator, a space, a word's hyphen or a list's comma, never
mid-word; a path inside the registry is shown relative to it (a fork's draft holds its parent's resolved
paths). Pure wording tests, and the panel at 80x24 through the pilot (no run)."""

from __future__ import annotations

import asyncio

from chat_pilot import SIZE, draft_penguins, screen_lines
from chat_pilot import chat_registry, make_app  # noqa: F401  (fixtures)
from snakegate.tui.present import param_lines, registry_relative
from snakegate.tui.present_wrap import wrap_value


def test_a_path_wraps_after_its_separators_never_mid_word():
    assert wrap_value("data/examples/tabular-penguins.csv", 15) == ["data/examples/", "tabular-", "penguins.csv"]
    assert wrap_value("data/examples/tabular-penguins.csv", 20) == ["data/examples/", "tabular-penguins.csv"]


def test_words_wrap_at_spaces_and_the_space_is_not_carried_to_the_next_line():
    assert wrap_value("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_the_dashes_of_an_option_are_never_a_break():
    assert wrap_value("(also runs with snakemake --configfile)", 31) == ["(also runs with snakemake", "--configfile)"]


def test_only_a_piece_wider_than_the_column_is_cut():
    assert wrap_value("abcdefghijkl/x", 5) == ["abcde", "fghij", "kl/x"]


def test_a_path_inside_the_registry_is_shown_relative_to_it_and_others_as_they_are():
    roots = ("/srv/registry",)
    assert registry_relative("/srv/registry/data/examples/t.csv", roots) == "data/examples/t.csv"
    assert registry_relative(["/srv/registry/a.csv", "/srv/registry-other/b.csv", "/etc/passwd"], roots) == \
        ["a.csv", "/srv/registry-other/b.csv", "/etc/passwd"]
    assert registry_relative({"x": "/srv/registry/../secret"}, roots) == {"x": "/srv/registry/../secret"}


def test_a_forks_resolved_path_reads_as_its_parents_draft_did():
    schema = {"properties": {"dataset_file": {"type": "string"}, "missing_strategy": {"type": "string"}}}
    parent = param_lines(schema, {"dataset_file": "data/examples/t.csv", "missing_strategy": "remove"})
    fork = param_lines(schema, {"dataset_file": "/srv/registry/data/examples/t.csv", "missing_strategy": "remove"},
                       roots=("/srv/registry",))
    assert fork == parent


def test_the_draft_panel_wraps_the_penguins_path_at_its_separators_at_80x24(make_app):
    app = make_app()

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            await draft_penguins(pilot)
            panel = [line.split("▏", 1)[-1].strip() for line in screen_lines(app).splitlines() if "▏" in line]
            assert "dataset_file     data/examples/" in panel and "tabular-" in panel and "penguins.csv" in panel
            assert "--configfile)" in panel and any(line.endswith("tabular-profile-") for line in panel)

    asyncio.run(scenario())
