"""`snakegate test`: a workflow's test invocations run with real Snakemake and their
declared outputs are compared with the expected files, byte for byte, or within a declared
numeric tolerance for JSON and CSV/TSV outputs (other cells and the table's shape exactly)."""
import json

import pytest

from snakegate.contribute.compare import compare_bytes, compare_output, json_difference, text_diff


def test_tabular_profile_tests_pass(curated_test_run):
    """The session's `snakegate test` of every curated workflow (curated_tests.py), read for tabular-profile."""
    code, out, err = curated_test_run.returncode, curated_test_run.cases("tabular-profile"), curated_test_run.stderr
    assert code == curated_test_run.expected_returncode, curated_test_run.stdout + err
    assert "ok    tabular-profile/basic" in out and "ok    tabular-profile/fill-mean" in out
    assert [line[:6] for line in out.splitlines() if not line.startswith(" ")] == ["ok    "] * 2  # 2 cases, 2 passed
    assert " passed, 0 failed" in curated_test_run.stdout
    assert "differs" not in out and "missing" not in out


def test_one_changed_expected_byte_is_reported_as_differs(tmp_registry, cli):
    expected = tmp_registry / "workflows/tabular-profile/test/basic/expected/results/cleaned.csv"
    data = bytearray(expected.read_bytes())
    at = data.index(b"Adelie")
    data[at] = ord("a")
    expected.write_bytes(bytes(data))

    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1
    assert "FAIL  tabular-profile/basic" in out
    assert "differs          cleaned (results/cleaned.csv)" in out
    assert "-adelie," in out and "+Adelie," in out  # a short unified diff of the text
    assert "identical        profile (results/profile.json)" in out
    assert "Traceback" not in out + err


def test_a_failing_run_shows_the_end_of_snakemakes_log(tmp_registry, cli):
    script = tmp_registry / "workflows/tabular-profile/scripts/load.py"
    script.write_text("raise RuntimeError('load exploded on purpose')\n")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1
    assert "Snakemake failed; the end of its log:" in out
    assert "load exploded on purpose" in out


def test_a_test_config_the_gate_refuses_fails_before_running(tmp_registry, cli):
    config = tmp_registry / "workflows/tabular-profile/test/basic/config.yaml"
    config.write_text(config.read_text() + "  missing_strategy: fill_mena\n")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1
    assert "refused by the gate: params.missing_strategy [enum]" in out
    assert "did you mean `fill_mean`?" in out


def test_unknown_case_is_a_clear_refusal(cli):
    code, out, err = cli("test", "tabular-profile", "--case", "nope")
    assert code == 1
    assert "has no test case nope" in err and "basic" in err


# -- the pure comparison --------------------------------------------------------------------------


def test_json_numbers_within_the_tolerance_count_as_identical():
    actual = json.dumps({"mean": 1.0000000001, "n": 3, "name": "x"}).encode()
    expected = json.dumps({"mean": 1.0, "n": 3, "name": "x"}).encode()
    assert compare_bytes(actual, expected, 1e-9)[0] == "identical"
    assert compare_bytes(actual, expected, None)[0] == "differs"


def test_json_beyond_the_tolerance_names_the_place():
    status, detail = compare_bytes(b'{"a": {"b": [1.0, 2.5]}}', b'{"a": {"b": [1.0, 2.0]}}', 1e-6)
    assert status == "differs" and "$.a.b[1]" in detail


@pytest.mark.parametrize("actual, expected", [
    ({"a": 1}, {"a": 1, "b": 2}), ([1, 2], [1]), ({"a": "x"}, {"a": "y"}), ({"a": True}, {"a": 1}),
])
def test_json_structure_and_non_numbers_must_match_exactly(actual, expected):
    assert json_difference(actual, expected, 1.0) is not None


def test_binary_files_report_the_first_differing_byte():
    status, detail = compare_bytes(b"\x89PNG\x00\x01", b"\x89PNG\x00\x02")
    assert status == "differs" and "first difference at byte 5" in detail


def test_text_diff_is_short():
    expected = "".join(f"line {i}\n" for i in range(200))
    actual = expected.replace("line", "LINE")
    diff = text_diff(actual, expected)
    assert len(diff.splitlines()) <= 21 and "more diff lines" in diff


def test_csv_numbers_within_the_tolerance_count_as_identical():
    actual = b"species,mass,ratio\nAdelie,3750,0.3333333334\nGentoo,5200,nan\n"
    expected = b"species,mass,ratio\nAdelie,3750.0,0.3333333333\nGentoo,5200,NaN\n"  # a missing value both sides
    assert compare_output(actual, expected, "csv-table", 1e-9) == ("identical", "equal within tolerance 1e-09")
    assert compare_output(actual, expected, "csv-table", None)[0] == "differs"


def test_a_tsv_number_beyond_the_tolerance_names_the_line_and_field():
    status, detail = compare_output(b"id\tmass\n1\t3500\n2\t4000.5\n", b"id\tmass\n1\t3500\n2\t4000\n", "tsv-table", 0.1)
    assert status == "differs" and detail == "beyond tolerance 0.1 at line 3, field 2: 4000.5 vs expected 4000"


@pytest.mark.parametrize("actual, expected, where", [
    (b"species,mass\nadelie,3750\n", b"species,mass\nAdelie,3750\n", "line 2, field 1: 'adelie' vs expected 'Adelie'"),
    (b"species,mass\nAdelie,NA\n", b"species,mass\nAdelie,3750\n", "line 2, field 2: 'NA' vs expected '3750'"),
    (b"species,mass\nAdelie,3750\n", b"species,mass\nAdelie,3750\nGentoo,5200\n", "2 rows vs expected 3"),
    (b"species,mass\nAdelie,3750,x\n", b"species,mass\nAdelie,3750\n", "line 2: 3 fields vs expected 2"),
], ids=["text", "missing value", "rows", "fields"])
def test_table_structure_and_non_numbers_must_match_exactly(actual, expected, where):
    assert compare_output(actual, expected, "csv-table", 1e6) == ("differs", f"beyond tolerance 1e+06 at {where}")


def test_a_tab_separated_table_is_compared_by_its_tab_columns():
    """Read with commas, "1\t3500.0001" would be one text cell and differ; read by its type's tab it is a number."""
    assert compare_output(b"id\tmass\n1\t3500.0001\n", b"id\tmass\n1\t3500\n", "tsv-table", 0.001)[0] == "identical"


def test_snakegate_test_passes_a_csv_output_within_its_declared_tolerance_and_names_the_cell_beyond_it(
        tmp_registry, cli):
    folder = tmp_registry / "workflows/tabular-profile"
    manifest = folder / "workflow.yaml"
    manifest.write_text(manifest.read_text().replace("test:\n", "test:\n  compare: {cleaned: {tolerance: 1.0e-6}}\n", 1))
    expected = folder / "test/basic/expected/results/cleaned.csv"
    text = expected.read_text()
    expected.write_text(text.replace("Chinstrap,Dream,49.8,", "Chinstrap,Dream,49.8000000001,", 1))
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 0, out + err
    assert "identical        cleaned (results/cleaned.csv): equal within tolerance 1e-06" in out
    expected.write_text(text.replace("Chinstrap,Dream,49.8,", "Chinstrap,Dream,49.9,", 1))
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1 and "FAIL  tabular-profile/basic" in out
    assert "differs          cleaned (results/cleaned.csv): beyond tolerance 1e-06 at line 2, field 3: 49.8 vs " \
           "expected 49.9" in out
