"""How a test asks a run's record a reviewer's question with standard vocabularies alone: prov.ttl (rdflib
Turtle) and an exported crate's ro-crate-metadata.json (rdflib JSON-LD, with the RO-Crate context the `rocrate`
package ships, so nothing is fetched), queried with SPARQL whose prefixes are only PROV, wfprov, wfdesc,
schema.org, Dublin Core terms and DQV: no `sg:`.

Imported by the test modules that ask (tests/ is on sys.path under pytest's default import mode).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import rdflib

from snakegate.provenance.document import ensure_rendering

STANDARD = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX wfprov: <http://purl.org/wf4ever/wfprov#>
PREFIX wfdesc: <http://purl.org/wf4ever/wfdesc#>
PREFIX schema: <http://schema.org/>
PREFIX dct: <http://purl.org/dc/terms/>
PREFIX dqv: <http://www.w3.org/ns/dqv#>
"""
OWN = "https://w3id.org/snakegate/ns#"
CRATE_BASE = "arcp://crate/"  # the base a crate's relative ids resolve against (a file's id is its path)


def prov_graph(run_dir: Path) -> rdflib.Graph:
    return rdflib.Graph().parse(ensure_rendering(Path(run_dir), "prov.ttl"), format="turtle")


def ask(run_dir: Path, query: str, **bindings) -> list:
    """The rows of a SPARQL query (standard prefixes only) over the run's prov.ttl."""
    assert "sg:" not in query and OWN not in query, "a reviewer's question uses standard vocabularies only"
    return list(prov_graph(run_dir).query(STANDARD + query, initBindings=bindings))


def crate_graph(crate: Path) -> rdflib.Graph:
    """The crate's metadata as RDF: its context is RO-Crate's (the rocrate package's copy: offline)."""
    import rocrate

    shipped = json.loads((Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld").read_text())["@context"]
    data = json.loads((Path(crate) / "ro-crate-metadata.json").read_text())
    context = data.get("@context")
    extra = [c for c in (context if isinstance(context, list) else [context]) if isinstance(c, dict)]
    data["@context"] = [shipped, *extra]
    with warnings.catch_warnings():  # rdflib's own JSON-LD parser calls its deprecated ConjunctiveGraph
        warnings.simplefilter("ignore", DeprecationWarning)
        return rdflib.Graph().parse(data=json.dumps(data), format="json-ld", base=CRATE_BASE)


def ask_crate(crate: Path, query: str, **bindings) -> list:
    assert "sg:" not in query and OWN not in query, "a reviewer's question uses standard vocabularies only"
    return list(crate_graph(crate).query(STANDARD + query, initBindings=bindings))
