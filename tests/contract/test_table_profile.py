"""A table's profile says what pandas.read_csv will make of it, without importing pandas: the kind of each
column, its missing and distinct counts, its values when few, its row count; cells for a small table; a
table pandas cannot read is named malformed; a large one gets no profile and says why.

The differential test draws tables from cells that sit on pandas' parsing edges (NA strings, booleans,
spaces around numbers, infinity, short rows) and holds every fact to pandas' own. (Integers beyond 64 bits
are left out of it: pandas' handling of them is irregular, gaps read as '' beside them; the profile calls
such a column text, which is what pandas' dtype says.)
"""
import csv
import io

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from snakegate.contract import table_profile
from snakegate.contract.table_profile import table_facts

EDGE_CELLS = ["", "NA", "nan", "NaN", "null", "None", "n/a", "#N/A", "NAN", "Nan", " ", "True", "false", "TRUE",
              "tRue", "yes", "0", "1", "-1", "1.5", " 2", "3 ", "1e3", "-.5", "5.", "inf", "-Infinity", "1_000",
              "0x10", "Adelie", "Gentoo", "a,b", "x y", "1.0"]
cell = st.sampled_from(EDGE_CELLS) | st.text(alphabet="ab01.e- ", min_size=1, max_size=4)


def pandas_kind(series: pd.Series) -> str:
    if series.isna().all():
        return "empty"
    if is_bool_dtype(series):
        return "boolean"
    return "numeric" if is_numeric_dtype(series) else "text"


def write(path, rows, header=("a", "b", "c")):
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=12))
def test_every_fact_of_the_profile_is_what_pandas_reads(tmp_path, rows):
    path = write(tmp_path / "t.csv", rows)
    facts = table_facts(path, ",")
    frame = pd.read_csv(path)
    assert facts["malformed"] is None
    assert facts["rows"] == len(frame)
    for name in frame.columns:
        column, series = facts["profile"][name], frame[name]
        assert column["kind"] == pandas_kind(series), (name, series.tolist())
        assert column["missing"] == int(series.isna().sum())
        if column["kind"] in ("numeric", "text"):
            assert column["distinct"] == series.nunique()
        if column["kind"] == "numeric":
            assert (column["min"], column["max"]) == (float(series.min()), float(series.max()))
    assert facts["cells"] is not None and len(facts["cells"]) == len(frame)
    for got, row in zip(facts["cells"], frame.itertuples(index=False)):
        for value, (name, expected) in zip(got, zip(frame.columns, row)):
            if pd.isna(expected):
                assert value is None
            elif facts["profile"][name]["kind"] == "text":
                assert value == expected
            else:
                assert value == expected


def test_value_counts_are_listed_most_frequent_first_for_a_label_column(tmp_path):
    rows = [["Adelie", "1"], ["Gentoo", "1.0"], ["Adelie", "2"], ["", "2"], ["Adelie", ""]]
    facts = table_facts(write(tmp_path / "t.csv", rows, header=("species", "n")), ",")
    species, n = facts["profile"]["species"], facts["profile"]["n"]
    assert species["values"] == [["Adelie", 3], ["Gentoo", 1]] and species["missing"] == 1
    assert n["values"] == [[1.0, 2], [2.0, 2]], "1 and 1.0 are one value, as pandas compares them"
    assert facts["cells"][1] == ["Gentoo", 1.0] and facts["cells"][3] == [None, 2.0]


def test_blank_lines_are_skipped_and_short_rows_are_padded_as_pandas_does(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n\n   \n3\n")
    facts = table_facts(path, ",")
    assert facts["rows"] == 2 == len(pd.read_csv(path))
    assert facts["cells"] == [[1, 2], [3, None]]
    assert facts["profile"]["b"]["missing"] == 1


def test_a_row_with_more_fields_than_the_header_is_malformed_naming_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(pd.errors.ParserError):
        pd.read_csv(path)
    facts = table_facts(path, ",")
    assert "line 3 has 3 fields but the header has 2" in facts["malformed"]
    assert facts["profile"] is None and facts["profile_absent"]


def test_text_that_is_not_utf8_is_malformed(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n\xff\xfe,3\n")
    with pytest.raises(UnicodeDecodeError):
        pd.read_csv(path)
    assert "not UTF-8" in table_facts(path, ",")["malformed"]


def test_a_tsv_is_profiled_on_tabs(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("x\ty\nfoo\t1\nbar\t2\n")
    facts = table_facts(path, "\t")
    assert facts["profile"]["x"]["kind"] == "text" and facts["profile"]["y"]["kind"] == "numeric"


def test_a_table_above_the_cells_bound_has_a_profile_but_no_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(table_profile, "CELLS_MAX_ROWS", 3)
    facts = table_facts(write(tmp_path / "t.csv", [["1", "2", "3"]] * 4), ",")
    assert facts["rows"] == 4 and facts["profile"]["a"]["kind"] == "numeric"
    assert facts["cells"] is None and "3 rows" in facts["cells_absent"]


def test_a_table_above_the_profile_bound_says_why_it_has_no_profile(tmp_path, monkeypatch):
    monkeypatch.setattr(table_profile, "PROFILE_MAX_BYTES", 64)
    path = write(tmp_path / "t.csv", [["1", "2", "3"]] * 20)
    facts = table_facts(path, ",")
    assert facts["rows"] is None and facts["profile"] is None and facts["cells"] is None
    assert "MiB" in facts["profile_absent"] and facts["malformed"] is None


def test_many_distinct_values_are_counted_up_to_the_cap_and_not_listed(tmp_path):
    rows = [[f"id{i}", str(i % 3), "x"] for i in range(table_profile.DISTINCT_MAX + 5)]
    facts = table_facts(write(tmp_path / "t.csv", rows), ",")
    ids = facts["profile"]["a"]
    assert ids["distinct"] == table_profile.DISTINCT_MAX and ids["distinct_capped"] and ids["values"] is None
    assert facts["profile"]["b"]["values"] == [[0, 335], [1, 335], [2, 335]]


@pytest.mark.parametrize("cells", [["99999999999999999999999", "1"], ["-9223372036854775809", "2"],
                                   ["18446744073709551615", "-1"]])
def test_integers_pandas_cannot_hold_in_64_bits_make_a_text_column(tmp_path, cells):
    path = write(tmp_path / "t.csv", [[c, "0", "0"] for c in cells])
    assert not is_numeric_dtype(pd.read_csv(path)["a"])
    assert table_facts(path, ",")["profile"]["a"]["kind"] == "text"
