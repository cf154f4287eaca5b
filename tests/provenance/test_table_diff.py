"""provenance.tablediff on real CSV/TSV files: rows added, removed and changed are counted and the first
few shown, cells by column, an added column does not turn every row into a change."""

from __future__ import annotations

from snakegate.provenance import tablediff


def _write(path, text):
    path.write_text(text)
    return path


def test_changed_cells_removed_and_added_rows_are_counted_and_shown(tmp_path):
    a = _write(tmp_path / "a.csv", "id,mass,sex\n1,3500,f\n2,4000,m\n3,3900,f\n4,4100,m\n")
    b = _write(tmp_path / "b.csv", "id,mass,sex\n1,3500,f\n2,4200.5,m\n4,4100,m\n5,3300,\n")
    change = tablediff.compare_tables(a, b)
    assert change["rows"] == [4, 4]
    assert (change["rows_added"], change["rows_removed"], change["rows_changed"], change["cells_changed"]) \
        == (1, 1, 1, 1)
    lines = [tablediff.example_text(e) for e in change["examples"]]
    assert lines == ["~ row 2: mass 4000 -> 4200.5", "- row 3: 3, 3900, f", '+ row 4: 5, 3300, ""']
    assert tablediff.summary(change) == "4 -> 4 rows: 1 added, 1 removed, 1 changed (1 cell)"


def test_an_added_column_is_named_once_and_rows_compare_on_the_shared_columns(tmp_path):
    a = _write(tmp_path / "a.tsv", "id\tmass\n1\t3500\n2\t4000\n")
    b = _write(tmp_path / "b.tsv", "id\tmass\tflag\n1\t3500\tx\n2\t4000\ty\n")
    change = tablediff.compare_tables(a, b)
    assert change["columns_added"] == ["flag"] and change["rows_changed"] == 0 and change["examples"] == []
    assert tablediff.summary(change).endswith("; columns added: flag")


def test_only_the_first_few_changes_are_kept_and_the_counts_cover_all(tmp_path):
    a = _write(tmp_path / "a.csv", "x\n" + "".join(f"{i}\n" for i in range(100)))
    b = _write(tmp_path / "b.csv", "x\n" + "".join(f"{i * 2}\n" for i in range(100)))
    change = tablediff.compare_tables(a, b)
    assert len(change["examples"]) == tablediff.EXAMPLES
    assert change["rows_added"] + change["rows_removed"] + change["rows_changed"] >= 50


def test_a_file_that_is_not_readable_gives_no_table_diff(tmp_path):
    assert tablediff.compare_tables(tmp_path / "missing.csv", tmp_path / "other.csv") is None
