"""Docs (issue 15.8): the design document lives in the repository and the README links only to files
inside the repository; CONTRIBUTING walks through `snakegate draft`."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_links_only_to_files_inside_the_repository():
    text = (ROOT / "README.md").read_text()
    links = [l for l in re.findall(r"\]\(([^)#\s]+)", text) if not re.match(r"[a-z]+://", l)]
    assert links
    for link in links:
        target = (ROOT / link).resolve()
        assert target.is_relative_to(ROOT), link
        assert target.exists(), link


def test_the_design_document_is_in_the_repository_and_describes_this_rounds_check():
    design = (ROOT / "docs" / "design.md").read_text()
    for words in ("x-sample-sheet", "snakegate draft", "lookup(", "not statically checked", "wrapper:",
                  "test.compare", "validate()"):
        assert words in design, words


def test_contributing_walks_through_draft_check_and_test():
    text = (ROOT / "workflows" / "CONTRIBUTING.md").read_text()
    walk = text[text.index("## Bringing an existing public workflow in with `snakegate draft`"):]
    for step in ("snakegate draft", "snakegate check", "snakegate test", "x-sample-sheet", "LICENSE"):
        assert step in walk or step in text, step
