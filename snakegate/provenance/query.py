"""Named SPARQL queries over a run's PROV-O record (prov.ttl), run with rdflib.

The questions cwlprov's `who` and `derived` answer, and the two around them:

- `who`: the agents of the run and of its gate decision, jobs and approval — the
  person, Snakemake (the engine), snakegate, Python, external tools, a chat model —
  with their role and version;
- `inputs`: the files the run used that none of its jobs made, with their sha256
  and the jobs and roles that used them (a staged input as the data root's file it was
  copied from, with the run folder's copy the jobs read as `staged`);
- `outputs`: the files the run's jobs made, with sha256, job, role and the
  declared output name;
- `derived FILE`: what FILE was derived from (transitively, with the job that made
  each step) and what was derived from it.

Only reads prov.ttl (made from prov.json on first request, document.ensure_rendering).
"""

from __future__ import annotations

import os
from pathlib import Path

PREFIXES = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX wfprov: <http://purl.org/wf4ever/wfprov#>
PREFIX schema: <http://schema.org/>
PREFIX sg: <https://w3id.org/snakegate/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""

# prov.ttl carries each relation as prov writes it (a relation with a role or a time in its qualified form only,
# so that it reads back into one PROV relation); these paths match either form. Records made before
# snakegate wrote standard terms spell a file's path and sha256 as sg:path and sg:sha256.
USED = "(prov:used|prov:qualifiedUsage/prov:entity)"
GENERATED_BY = "(prov:wasGeneratedBy|prov:qualifiedGeneration/prov:activity)"
DERIVED_FROM = ("(prov:wasDerivedFrom|prov:qualifiedDerivation/prov:entity|prov:wasRevisionOf"
                "|prov:qualifiedRevision/prov:entity)")
PATH = "(prov:atLocation|sg:path)"
SHA256 = "(schema:sha256|sg:sha256)"

def _derived(link: str) -> str:
    """The files `link` (a path between ?target and ?file) reaches from the file at ?target_path."""
    return ("\nSELECT DISTINCT ?path ?sha256 ?job WHERE {\n"
            f"  ?target {PATH} ?target_path .\n  {link} .\n"
            f"  ?file {PATH} ?path . OPTIONAL {{ ?file {SHA256} ?sha256 }}\n"
            f"  OPTIONAL {{ ?file {GENERATED_BY} ?job }}\n}} ORDER BY ?path\n")


QUERIES = {
    "who": """
SELECT DISTINCT ?agent ?name ?version ?role ?activity ?kind WHERE {
  ?run a wfprov:WorkflowRun ; sg:status ?status .
  { ?run prov:qualifiedAssociation ?assoc . BIND(?run AS ?activity) BIND(wfprov:WorkflowRun AS ?kind) }
  UNION
  { ?run prov:wasInformedBy ?activity . ?activity a ?kind ; prov:qualifiedAssociation ?assoc .
    FILTER(?kind IN (sg:GateDecision, sg:Approval)) }
  ?assoc prov:agent ?agent .
  OPTIONAL { ?assoc prov:hadRole ?role }
  OPTIONAL { ?agent schema:name ?schemaName } OPTIONAL { ?agent rdfs:label ?label }
  BIND(COALESCE(?schemaName, ?label, STR(?agent)) AS ?name)
  OPTIONAL { ?agent schema:softwareVersion ?version }
} ORDER BY ?kind ?role ?name
""",
    "inputs": f"""
SELECT ?path ?sha256 ?job ?role ?staged WHERE {{
  ?job a wfprov:ProcessRun ; {USED} ?used .
  OPTIONAL {{ ?job prov:qualifiedUsage [ prov:entity ?used ; prov:hadRole ?role ] }}
  FILTER NOT EXISTS {{ ?used {GENERATED_BY} ?maker . ?maker a wfprov:ProcessRun }}
  OPTIONAL {{ ?used {GENERATED_BY} ?stage . ?stage a sg:Staging .
             ?used {DERIVED_FROM} ?source ; {PATH} ?staged }}
  BIND(COALESCE(?source, ?used) AS ?file)
  ?file {PATH} ?path . OPTIONAL {{ ?file {SHA256} ?sha256 }}
}} ORDER BY ?path ?job
""",
    "outputs": f"""
SELECT ?path ?sha256 ?job ?role ?declared WHERE {{
  ?file {GENERATED_BY} ?job ; {PATH} ?path . ?job a wfprov:ProcessRun .
  OPTIONAL {{ ?file {SHA256} ?sha256 }} OPTIONAL {{ ?file sg:declaredOutput ?declared }}
  OPTIONAL {{ ?file prov:qualifiedGeneration [ prov:activity ?job ; prov:hadRole ?role ] }}
}} ORDER BY ?path
""",
    "derived-from": _derived(f"?target {DERIVED_FROM}+ ?file"),
    "derived-into": _derived(f"?file {DERIVED_FROM}+ ?target"),
    "made-by": f"""
SELECT ?job ?rule ?status ?sha256 WHERE {{
  ?target {PATH} ?target_path . OPTIONAL {{ ?target {SHA256} ?sha256 }}
  OPTIONAL {{ ?target {GENERATED_BY} ?job . ?job sg:rule ?rule ; sg:status ?status }}
}}
""",
}


class QueryError(Exception):
    """The question cannot be answered as asked; the message names the file or the run."""


def _short(term) -> str | None:
    """An IRI in its prefix form when the record's namespaces cover it, else as it is; literals as text."""
    if term is None:
        return None
    text = str(term)
    from snakegate.provenance.vocab import NAMESPACES

    for prefix, uri in sorted(NAMESPACES.items(), key=lambda kv: -len(kv[1])):
        if text.startswith(uri) and prefix not in ("file", "abs"):
            return f"{prefix}:{text[len(uri):]}"
    return text


def load(run_dir: Path):
    """The run's PROV-O graph (prov.ttl, rendered from prov.json when the run deferred it)."""
    import rdflib

    from snakegate.provenance.document import ensure_rendering

    path = ensure_rendering(Path(run_dir), "prov.ttl")
    return rdflib.Graph().parse(path, format="turtle")


def run(graph, name: str, **bindings) -> list[dict]:
    """Rows of the named query as {column: short text or None}."""
    import rdflib

    result = graph.query(PREFIXES + QUERIES[name],
                         initBindings={k: rdflib.Literal(v) for k, v in bindings.items()})
    return [{str(var): _short(row[var]) for var in result.vars} for row in result]


def record_path(run_dir: Path, registry_root: Path, given: str, known: set[str]) -> str:
    """FILE as the record spells it: as given, inside the run folder, or made relative to the registry."""
    run_dir, registry_root = Path(run_dir), Path(registry_root)
    in_run = os.path.normpath(run_dir / given)
    candidates = [given, Path(in_run).relative_to(registry_root).as_posix()
                  if Path(in_run).is_relative_to(registry_root) else in_run]
    absolute = Path(given) if os.path.isabs(given) else Path.cwd() / given
    try:
        candidates.append(Path(os.path.normpath(absolute)).relative_to(registry_root).as_posix())
    except ValueError:
        candidates.append(os.path.normpath(absolute))
    for candidate in candidates:
        if candidate in known:
            return candidate
    close = sorted(p for p in known if Path(p).name == Path(given).name)
    hint = f"; did you mean {', '.join(close[:3])}?" if close else "; `snakegate prov RUN --outputs` lists them"
    raise QueryError(f"run {Path(run_dir).name} records no file `{given}`{hint}")


def known_paths(graph) -> set[str]:
    import rdflib

    sg = rdflib.Namespace("https://w3id.org/snakegate/ns#")
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    return {str(o) for predicate in (prov.atLocation, sg.path) for o in graph.objects(None, predicate)
            if isinstance(o, rdflib.Literal)}


def derived(graph, path: str) -> dict:
    """What the file at `path` was made by, derived from and what was derived from it."""
    made = run(graph, "made-by", target_path=path)
    return {"file": path, "sha256": made[0]["sha256"] if made else None,
            "made_by": [m for m in made if m["job"]],
            "derived_from": run(graph, "derived-from", target_path=path),
            "derived_into": run(graph, "derived-into", target_path=path)}
