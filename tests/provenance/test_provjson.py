"""prov.json is written directly (provjson.py); prov must read it into the document built through prov's API.

The decided condition for writing PROV-JSON ourselves: `prov` parses every
document we write into a `ProvDocument` equal to the one `Document.to_prov()`
builds. Proven two ways: a hypothesis property test over random documents
(every relation kind, every value type, awkward text), and the real run of
every curated workflow's first example.
"""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prov.model import ProvDocument
from snakegate.provenance import capture
from snakegate.provenance.document import PLAIN_RELATIONS, RELATIONS, TIME_FORMALS, Document, Many, Q, local

from curated_kinds import CURATED  # the runs themselves: a session fixture in conftest.py
from prov_iris import run_ident

QNAMES = [Q(q) for q in ("sg:Job", "wfprov:ProcessRun", "prov:Plan", "schema:Person", "plan:rule/a/input/x",
                         "sg:jobLog", "file:abc/def")]
PREFIXES = ("run", "file", "abs", "agent", "inv", "wf", "plan")

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
times = st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2200, 1, 1),
                     timezones=st.sampled_from([dt.timezone.utc, dt.timezone(dt.timedelta(hours=5, minutes=30)),
                                                dt.timezone(dt.timedelta(hours=-8))]))
scalars = st.one_of(text, st.integers(min_value=-2**80, max_value=2**80), st.booleans(),
                    st.floats(allow_nan=False), times, st.sampled_from(QNAMES))
values = st.one_of(scalars, st.lists(scalars, min_size=2, max_size=4, unique_by=lambda v: (type(v), v))
                   .map(lambda items: Many(items)))
attributes = st.dictionaries(st.sampled_from(["sg:a", "sg:b", "sg:path", "schema:name", "dct:isPartOf"]), values,
                             max_size=4)


@st.composite
def identifiers(draw):
    return f"{draw(st.sampled_from(PREFIXES))}:{local(draw(st.text(min_size=1, max_size=30)))}"


@st.composite
def documents(draw) -> Document:
    doc = Document()
    doc.namespaces["plan"] = "https://w3id.org/snakegate/id/workflow/x/0123/"
    idents = draw(st.lists(identifiers(), min_size=1, max_size=8, unique=True))
    for ident in idents:
        kind = draw(st.sampled_from(["entity", "activity", "agent"]))
        attrs = draw(attributes)
        if draw(st.booleans()):
            attrs["prov:type"] = draw(st.one_of(st.sampled_from(QNAMES),
                                                st.lists(st.sampled_from(QNAMES), min_size=2, max_size=3,
                                                         unique=True).map(Many)))
        if draw(st.booleans()):
            attrs["prov:label"] = draw(text)
        if kind == "activity":
            doc.activity(ident, draw(st.none() | times), draw(st.none() | times), attrs)
        else:
            getattr(doc, kind)(ident, attrs)
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(sorted(RELATIONS)))
        names = RELATIONS[kind]
        formal = [draw(st.sampled_from(idents))]
        for name in names[1:]:
            if name in TIME_FORMALS:
                formal.append(draw(st.none() | times))
            else:
                formal.append(draw(st.none() | st.sampled_from(idents)))
        if kind in PLAIN_RELATIONS:
            formal[1] = formal[1] or idents[0]  # both are required
            doc.relation(kind, *formal)
        else:
            attrs = draw(attributes)
            if draw(st.booleans()):
                attrs["prov:role"] = draw(st.sampled_from(QNAMES))
            doc.relation(kind, *formal, attrs=attrs)
    return doc


def read_back(doc: Document) -> ProvDocument:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # prov warns when it has to guess; what we write must not need it
        return ProvDocument.deserialize(content=doc.json_text(), format="json")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_prov_reads_our_prov_json_as_the_document_its_api_builds(doc):
    assert read_back(doc) == doc.to_prov()


def test_the_writer_keeps_what_prov_keeps_for_edge_values():
    doc = Document()
    doc.entity("file:x", {"sg:int32": 2**31 - 1, "sg:int64": 2**31, "sg:huge": 2**64, "sg:neg": -2**63,
                          "sg:inf": float("inf"), "sg:tiny": 5e-324, "sg:text": "\x00\u2028\"\\é",
                          "sg:when": dt.datetime(2026, 1, 1, 12, 0, 0, 1, tzinfo=dt.timezone.utc)})
    doc.activity("run:x", "2026-01-01T00:00:00+00:00", None)
    assert read_back(doc) == doc.to_prov()


# ---- every curated workflow's real run ------------------------------------------------------------


def build_again(registry: Path, workflow: str, run_dir: Path) -> Document:
    from snakegate.run.pinning import run_workflow

    wf = run_workflow(run_dir)  # the run's own workflow copy, as the Snakefile's handlers pass it
    assert wf is not None and wf.id == workflow
    return capture.build(run_dir, registry, registry, wf.manifest.model_dump(), wf.schema, wf.folder, None,
                         "succeeded", "wf_")


@pytest.mark.parametrize("curated_kinds", CURATED, indirect=True)
def test_each_curated_workflows_real_run_reads_back_as_prov_builds_it(curated_kinds):
    # the session's succeeded run of the workflow (curated_kinds.py), read-only: not run again for this module
    run_dir = curated_kinds.runs["succeeded"]
    doc = build_again(curated_kinds.registry, curated_kinds.workflow, run_dir)
    assert doc.json_text() == (run_dir / "prov.json").read_text()  # the same run gives the same record
    assert read_back(doc) == doc.to_prov()
    assert len(doc) > 30


@pytest.mark.parametrize("curated_kinds", ["classifier-benchmark"], indirect=True)
def test_a_builtin_dataset_is_an_entity_naming_the_library_and_version_that_ship_it(curated_kinds):
    import json
    from importlib.metadata import version

    run_dir = curated_kinds.runs["succeeded"]
    data = json.loads((run_dir / "prov.json").read_text())
    builtin = [(i, a) for i, a in data["entity"].items() if i.startswith("builtin:")]
    assert len(builtin) == 1
    ident, attrs = builtin[0]
    assert attrs["sg:builtin"] == "builtin:breast_cancer"
    assert attrs["sg:providedBy"] == f"scikit-learn=={version('scikit-learn')}"
    users = {r["prov:activity"] for r in data["used"].values() if r["prov:entity"] == ident}
    assert f"{run_ident(run_dir)}" in users
    assert any("/job/load" in u for u in users)  # the job whose params name it
