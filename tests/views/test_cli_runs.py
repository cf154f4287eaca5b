"""The CLI at 80 columns on real runs (the session's runs, conftest.py): where a chat or MCP run came from,
a masked secret, the rows a fork changed in a CSV output, and export refusing to overwrite.
"""

from __future__ import annotations

import json
import os
import zipfile

from prov_runs import SECRET
from registry_copies import snakegate


def sg80(root, *args):
    """The console command at COLUMNS=80, as a person at a narrow terminal runs it."""
    return snakegate(root, *args, COLUMNS="80")


def test_show_run_says_a_chat_run_came_from_the_chat_and_who_approved_it(prov_registry, chat_run):
    out = sg80(prov_registry, "show-run", chat_run.name).stdout
    assert "source          chat (proposed by qwen2.5:7b via openai-compatible, approved by\n" \
           "                Jane Doe)\n" in out
    assert "approved_at     2026-01-31T10:00:00Z\n" in out
    assert "source          snakegate run" not in out


def test_show_run_says_an_mcp_run_came_through_mcp(prov_registry, mcp_run):
    out = sg80(prov_registry, "show-run", mcp_run.name).stdout
    assert "source          MCP (proposed by MCP client Claude Desktop 0.9, approved by Jane\n" \
           "                Doe)\n" in out


def test_show_run_of_a_failure_shows_params_masked_and_the_error(prov_registry, failed_run):
    proc = sg80(prov_registry, "show-run", failed_run.name)
    out = proc.stdout
    assert "params\n  greeting  hello\n  token     ••••••\n" in out
    assert "failed_rule     explode\n" in out and "explode failed on purpose" in out
    assert SECRET not in out + proc.stderr
    # only a last word that cannot be broken (a path) may run past 80 columns
    assert all(len(line.rstrip().rsplit(" ", 1)[0]) < 80 for line in out.splitlines())


def test_show_run_of_a_fork_names_its_parent_and_change(prov_registry, fork_run, succeeded_run):
    fork, _ = fork_run
    out = sg80(prov_registry, "show-run", fork.name).stdout
    assert f"fork_of         {succeeded_run.name} (missing_strategy: fill_mean)\n" in out


def test_diff_shows_the_rows_a_fork_added_to_a_csv_output_with_counts(prov_registry, fork_run, succeeded_run):
    fork, _ = fork_run
    out = sg80(prov_registry, "diff", succeeded_run.name, fork.name).stdout
    assert out.startswith(
        f"diff {succeeded_run.name} -> {fork.name}\n"
        "parameters (1 changed):\n"
        "  params.missing_strategy: 'remove' -> 'fill_mean'\n"
        "outputs (3 differ, 0 identical):\n"
        "  cleaned: results/cleaned.csv differs: 138 -> 143 rows: 5 added, 0 removed, 0\n"
        "      changed (0 cells)\n"
        "      + row 36: Adelie, Dream, 39.7, 17.5, 199.4027778, 3675, female, 2008\n"
        "      + row 66: Adelie, Dream, 39.8, 19.2, 199.4027778, 4050, female, 2009\n"
        "      + row 69: Adelie, Dream, 43.2, 19.3, 194, 4184.548611, female, 2008\n"
        "      + row 77: Gentoo, Biscoe, 48.2, 15.7, 216, 4184.548611, male, 2008\n"
        "      + row 140: Adelie, Torgersen, 39.1, 17.2537931, 182, 4225, female, 2007\n"
        "  plot: results/profile.png differs\n"
        "  profile: results/profile.json differs (33 value(s) changed)\n")
    result = json.loads(sg80(prov_registry, "diff", succeeded_run.name, fork.name, "--json").stdout)
    table = next(o["table"] for o in result["outputs"] if o["name"] == "cleaned")
    assert table["rows"] == [138, 143] and table["rows_added"] == 5 and table["rows_changed"] == 0


def test_export_refuses_to_overwrite_unless_forced(prov_registry, succeeded_run, tmp_path):
    target = tmp_path / "run.zip"
    assert sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", target).returncode == 0
    first = target.stat().st_mtime_ns
    proc = sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", target)
    assert proc.returncode == 2 and "already exists; add --force to replace it" in proc.stderr
    assert target.stat().st_mtime_ns == first
    os.utime(target, ns=(1, 1))
    assert sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", target, "--force").returncode == 0
    assert target.stat().st_mtime_ns != 1 and "ro-crate-metadata.json" in zipfile.ZipFile(target).namelist()

    folder = tmp_path / "crate"
    assert sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", folder).returncode == 0
    (folder / "mine.txt").write_text("a note kept beside the crate")
    proc = sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", folder)
    assert proc.returncode == 2 and "already holds an RO-Crate; add --force" in proc.stderr
    assert (folder / "mine.txt").is_file()
    assert sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", folder, "--force").returncode == 0
    assert (folder / "ro-crate-metadata.json").is_file() and not (folder / "mine.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch folder left

    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("not a crate")
    proc = sg80(prov_registry, "export", succeeded_run.name, "--ro-crate", other, "--force")
    assert proc.returncode == 2 and "holds no RO-Crate" in proc.stderr and (other / "keep.txt").is_file()


def test_report_is_listed_in_help_at_80_columns(prov_registry):
    out = snakegate(prov_registry, "--help").stdout
    assert "report" in out
