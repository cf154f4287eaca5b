"""prov.json is streamed to its file (issue 30: memory at 10,000 jobs): the file holds exactly the text `dumps()`
gives, and writing it never holds that text whole. Real files; memory is Python's own count (tracemalloc)."""

from __future__ import annotations

import datetime as dt
import tracemalloc

from snakegate.provenance import provjson
from snakegate.provenance.document import Document, Many, Q


def _document(jobs: int) -> Document:
    doc = Document()
    doc.agent("agent:snakegate", {"prov:label": "snakegate"})
    run = doc.activity("run:r", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), None, {"sg:status": "succeeded"})
    doc.associated(run, "agent:snakegate", role="sg:gateAndRunner")
    for i in range(jobs):
        job = doc.activity(f"run:r/job/{i}", dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                           dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
                           {"sg:rule": "step", "sg:wildcards": f'{{"i":"{i}"}}', "sg:threads": 1})
        out = doc.entity(f"file:{i:064x}/results/part_{i}.txt",
                         {"prov:type": Q("wfprov:Artifact"), "schema:contentSize": i, "sg:tags": Many(("a", "b"))})
        doc.used(job, "file:in", role="sg:input")
        doc.generated(out, job, role="sg:output")
        doc.informed(job, run)
    return doc


def test_the_written_prov_json_is_the_text_dumps_gives(tmp_path):
    doc = _document(50)
    doc.write(tmp_path, renderings_max_records=0)
    assert (tmp_path / "prov.json").read_text(encoding="utf-8") == provjson.dumps(doc)


def test_writing_a_big_record_never_holds_its_text_whole(tmp_path):
    doc = _document(5000)
    size = len(provjson.dumps(doc))
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        doc.write(tmp_path, renderings_max_records=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (tmp_path / "prov.json").stat().st_size == size
    assert peak - before < size, f"writing held {peak - before:,} bytes for a {size:,}-character record"
