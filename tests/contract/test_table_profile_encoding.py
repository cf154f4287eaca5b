"""A table's profile is read in its type's encoding (a registry type may declare latin-1): such a table is
profiled, not refused as "not UTF-8"; read as UTF-8 the same bytes are malformed."""
from snakegate.contract.table_profile import table_facts


def test_a_latin1_table_is_profiled_in_its_types_encoding_and_malformed_as_utf8(tmp_path):
    path = tmp_path / "cities.csv"
    path.write_bytes("city,n\nZ\xfcrich,1\nGen\xe8ve,2\n".encode("latin-1"))
    facts = table_facts(path, ",", "latin-1")
    assert facts["malformed"] is None and facts["rows"] == 2
    assert facts["profile"]["city"]["values"] == [["Genève", 1], ["Zürich", 1]]
    assert "not UTF-8" in table_facts(path, ",")["malformed"]
