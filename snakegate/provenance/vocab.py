"""The namespaces of every snakegate PROV document, and where snakegate's own terms are defined.

Standard vocabularies first: PROV, wfprov and wfdesc (as CWLProv uses them),
schema.org and Dublin Core terms, and the W3C Data Quality Vocabulary (DQV, with a
SKOS definition) for a run's verdict: its checks as metrics, their values as measurements. snakegate's own terms (`sg:`) live under
https://w3id.org/snakegate/ns# and are defined, each with rdfs:label and
rdfs:comment, in snakegate.ttl next to this module (shipped with the package;
`vocabulary_path()`). Instance identifiers live under
https://w3id.org/snakegate/id/<kind>/.

Constants only; nothing is read here.
"""

from __future__ import annotations

from pathlib import Path

SG = "https://w3id.org/snakegate/ns#"
ID = "https://w3id.org/snakegate/id/"

NAMESPACES = {
    "sg": SG,  # snakegate's own terms: types, properties, roles (snakegate.ttl)
    "wfprov": "http://purl.org/wf4ever/wfprov#",  # WorkflowRun, ProcessRun, WorkflowEngine, Artifact
    "wfdesc": "http://purl.org/wf4ever/wfdesc#",  # Workflow, Process, hasSubProcess
    "schema": "http://schema.org/",
    "dct": "http://purl.org/dc/terms/",
    "dqv": "http://www.w3.org/ns/dqv#",  # Metric, QualityMeasurement, isMeasurementOf, computedOn, value
    "skos": "http://www.w3.org/2004/02/skos/core#",  # definition (what failing a check means)
    "run": f"{ID}run/",  # run:<run_id>, run:<run_id>/job/<rule>[/<wildcards>], run:<run_id>/gate
    "file": f"{ID}file/",  # file:<sha256>/<path relative to the registry root> (file:absent/<path>)
    "abs": f"{ID}abs/",  # abs:<sha256>/<absolute path without the leading />, outside the registry
    "inv": f"{ID}invocation/",  # inv:<invocation id>
    "wf": f"{ID}workflow/",  # wf:<workflow id>/<content hash>; its steps and roles under the `plan` prefix
    "registry": f"{ID}registry/",  # registry:<git commit> | registry:no-git
    "agent": f"{ID}agent/",  # agent:snakemake, agent:person/<name>, agent:tool/<name>, ...
    "env": f"{ID}environment/",  # env:<sha256 of the facts>
    "builtin": f"{ID}builtin/",  # builtin:<dataset>/<distribution==version>
    "refinement": f"{ID}refinement/",  # refinement:<refinement id>: an approved bounded refinement
}


def vocabulary_path() -> Path:
    """snakegate.ttl: every `sg:` term with its rdfs:label and rdfs:comment."""
    return Path(__file__).with_name("snakegate.ttl")
