"""`snakegate report RUN`: one self-contained HTML page per run, for every run kind, read back as a person
would read it (its text and its elements, parsed with the standard library's HTML parser).

The runs are real (prov_runs.py, report_runs.py): `snakegate run`, a failure, a cancel by SIGINT, a fork,
a rerun, plain snakemake, plain snakemake with --until, the chat's and the MCP server's way through the
runner, and a table whose header holds HTML (conftest.py). The browser check is test_report_browser.py.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from prov_runs import SECRET
from registry_copies import snakegate
from report_runs import HOSTILE_CELL, HOSTILE_COLUMN


class Page(HTMLParser):
    """The page's visible text (one string) and its elements as (tag, attrs)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.chunks: list[str] = []
        self._skip = 0
        self.feed(html)
        self.text = " ".join(" ".join(self.chunks).split())

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.chunks.append(data)

    def all(self, tag: str) -> list[dict]:
        return [attrs for t, attrs in self.elements if t == tag]


def report(root: Path, run: Path, *extra) -> tuple[Page, str]:
    proc = snakegate(root, "report", run.name, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dest = run / "report.html" if not extra else Path(extra[extra.index("-o") + 1])
    html = (dest if dest.is_absolute() else root / dest).read_text(encoding="utf-8")
    return Page(html), html


def sha256(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_succeeded_run_shows_status_times_pins_params_outputs_with_hashes_and_jobs(prov_registry, succeeded_run):
    page, html = report(prov_registry, succeeded_run)
    record = json.loads((succeeded_run / "run.json").read_text())
    text = page.text
    assert "Tabular profile succeeded" in text and f"run {succeeded_run.name}" in text
    assert record["started"] in text and record["ended"] in text
    assert record["invocation_id"] in text
    prov = json.loads((succeeded_run / "prov.json").read_text())
    commit = next(a["sg:gitCommit"] for a in prov["entity"].values() if "sg:gitCommit" in a)
    assert f"registry commit {commit}" in text
    assert "missing_strategy remove (default)" in text and "dataset_file data/examples/tabular-penguins.csv" in text
    for name, rel in (("cleaned", "results/cleaned.csv"), ("profile", "results/profile.json"),
                      ("plot", "results/profile.png")):
        assert f"sha256 {sha256(succeeded_run / rel)} · matches the PROV record" in text, name
    assert "key number value rows_in 150 rows_out" in text            # key numbers of the JSON output
    assert "species island bill_length_mm" in text and "first 5 of" in text   # the first rows of the table
    images = page.all("img")
    assert len(images) == 1 and images[0]["src"].startswith("data:image/png;base64,")
    jobs = [attrs["title"].split()[0] for attrs in page.all("div") if "job" in attrs.get("class", "").split()]
    assert sorted(jobs) == ["clean", "load", "plot", "profile"]
    assert "started from snakegate run" in text and "operator Ada Tester <ada@example.org>" in text


def test_the_page_loads_nothing_from_anywhere(prov_registry, succeeded_run):
    page, html = report(prov_registry, succeeded_run)
    assert all(i["src"].startswith("data:") for i in page.all("img"))
    assert not page.all("script") and not page.all("link") and not page.all("iframe")
    policy = next(m["content"] for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy
    assert all(not a.get("href", "").startswith(("http:", "https:", "//")) for a in page.all("a"))


def test_a_failed_run_shows_the_failing_rule_the_real_error_and_its_log_tail_never_the_secret(prov_registry,
                                                                                              failed_run):
    page, html = report(prov_registry, failed_run)
    record = json.loads((failed_run / "run.json").read_text())
    message = (record.get("failure") or {}).get("message") or record["error"]
    assert "What happened Failing rule: explode" in page.text
    assert message[:60] in page.text
    assert "explode failed on purpose" in page.text                       # the log's tail
    assert "token ••••••" in page.text                                     # the x-sensitive param, masked
    assert SECRET not in html


def test_a_cancelled_run_says_by_what_and_which_jobs_were_stopped(prov_registry, cancelled_run):
    page, _ = report(prov_registry, cancelled_run)
    record = json.loads((cancelled_run / "run.json").read_text())
    assert "What happened Cancelled by SIGINT" in page.text
    if "running_jobs" in record:  # recorded by runs that stop their jobs themselves
        assert "Cancelled by SIGINT; jobs stopped: wait" in page.text


def test_a_fork_names_its_change_and_links_its_parents_page(prov_registry, fork_run, succeeded_run):
    fork, _ = fork_run
    page, _ = report(prov_registry, fork)
    assert f"Fork of run {succeeded_run.name}" in page.text
    assert "changing missing_strategy to fill_mean" in page.text
    links = [a["href"] for a in page.all("a")]
    assert f"../{succeeded_run.name}/report.html" in links
    assert (fork / links[0]).resolve() == (succeeded_run / "report.html").resolve()


def test_a_rerun_links_its_parent_relative_to_where_the_page_is_written(prov_registry, rerun_run, succeeded_run,
                                                                         tmp_path):
    rerun, _ = rerun_run
    page, _ = report(prov_registry, rerun, "-o", str(tmp_path / "rerun.html"))
    assert f"Rerun of run {succeeded_run.name}" in page.text
    href = next(a["href"] for a in page.all("a"))
    assert (tmp_path / href).resolve() == (succeeded_run / "report.html").resolve()


def test_plain_snakemake_and_incomplete_runs_say_where_they_came_from_and_what_is_missing(prov_registry, plain_run,
                                                                                         incomplete_run):
    page, _ = report(prov_registry, plain_run)
    assert "started from plain snakemake" in page.text
    page, _ = report(prov_registry, incomplete_run)
    assert "incomplete" in page.text and "Missing outputs:" in page.text
    assert "results/profile.json" in page.text.split("Missing outputs:")[1]
    assert "profile (json) results/profile.json not present" in page.text


def test_a_run_whose_processes_died_is_reported_interrupted_with_the_jobs_that_finished(prov_registry,
                                                                                     interrupted_run):
    page, _ = report(prov_registry, interrupted_run)
    assert "Slow second job interrupted" in page.text
    assert "Interrupted: the process that ran it stopped before the run was recorded; found at" in page.text
    assert "copy succeeded" in page.text  # the job that finished, from Snakemake's own records


def test_chat_and_mcp_runs_name_who_proposed_and_who_approved(prov_registry, chat_run, mcp_run):
    page, _ = report(prov_registry, chat_run)
    assert "started from chat proposed by qwen2.5:7b via openai-compatible" in page.text
    assert "approved by Jane Doe at 2026-01-31T10:00:00Z" in page.text
    page, _ = report(prov_registry, mcp_run)
    assert "started from MCP proposed by MCP client Claude Desktop 0.9" in page.text
    assert "approved by Jane Doe at 2026-01-31T11:00:00Z" in page.text


def test_html_in_a_table_header_and_cells_is_shown_as_text_never_as_markup(prov_registry, hostile_run):
    page, html = report(prov_registry, hostile_run)
    assert HOSTILE_COLUMN in page.text and HOSTILE_CELL in page.text    # shown, as text
    assert HOSTILE_COLUMN not in html and HOSTILE_CELL not in html      # never as markup
    assert len(page.all("img")) == 1 and not page.all("script")


def test_a_secret_a_workflow_wrote_into_its_outputs_is_masked_in_the_previews(prov_registry, leaky_run):
    page, html = report(prov_registry, leaky_run)
    assert SECRET not in html
    assert "the token is ••••••" in page.text and "token ••••••" in page.text


def test_the_same_run_gives_the_same_page_byte_for_byte(prov_registry, succeeded_run, tmp_path):
    _, first = report(prov_registry, succeeded_run, "-o", str(tmp_path / "a.html"))
    _, second = report(prov_registry, succeeded_run, "-o", str(tmp_path / "b.html"))
    assert first == second


def test_report_replaces_its_own_page_but_no_other_file_unless_forced(prov_registry, succeeded_run, tmp_path):
    report(prov_registry, succeeded_run)
    report(prov_registry, succeeded_run)                    # its own earlier page: replaced
    notes = tmp_path / "notes.html"
    notes.write_text("my notes")
    proc = snakegate(prov_registry, "report", succeeded_run.name, "-o", notes)
    assert proc.returncode == 2 and "already exists and is not a report of run" in proc.stderr
    assert "--force" in proc.stderr and notes.read_text() == "my notes"
    proc = snakegate(prov_registry, "report", succeeded_run.name, "-o", notes, "--force")
    assert proc.returncode == 0 and "<!DOCTYPE html>" in notes.read_text()


@pytest.mark.parametrize("target, message", [("missing/dir/r.html", "does not exist"), (".", "is a folder")])
def test_an_unwritable_destination_is_a_clear_message(prov_registry, succeeded_run, target, message):
    proc = snakegate(prov_registry, "report", succeeded_run.name, "-o", target)
    assert proc.returncode == 2 and message in proc.stderr
