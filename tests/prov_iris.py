"""How a test names a run in its PROV record: `run:<run_uuid>` (run.json), the IRI minted when the run began.

Imported by the test modules that read prov.json or prov.ttl (tests/ is on sys.path under pytest's default
import mode).
"""

from __future__ import annotations

import json
from pathlib import Path

RUN_NS = "https://w3id.org/snakegate/id/run/"


def run_ident(run_dir: Path) -> str:
    """The run's PROV identifier as prov.json spells it: `run:<uuid>`; `run:<run id>` for a run.json written
    without a UUID (a run recorded before run UUIDs, or a test's hand-made run.json)."""
    record = json.loads((Path(run_dir) / "run.json").read_text())
    return f"run:{record.get('run_uuid') or Path(run_dir).name}"


def run_iri(run_dir: Path):
    """The run's IRI as prov.ttl holds it (an rdflib URIRef)."""
    import rdflib

    return rdflib.URIRef(RUN_NS + run_ident(run_dir).removeprefix("run:"))
