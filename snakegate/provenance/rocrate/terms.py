"""The fixed parts of every crate snakegate writes (export.py, plan_crate.py): the profiles it conforms to,
schema.org action statuses, JSON Schema types as FormalParameter types, MIME types by file name, the workflow
class that is also a HowTo, and the small path and identifier helpers.

Constants and pure functions (`folder_files` lists a folder); nothing is written here.
"""

from __future__ import annotations

import functools
import mimetypes
import os
from pathlib import Path

from snakegate.provenance.hashing import IGNORED_NAMES

PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/ro/wfrun/provenance/0.5": "Provenance Run Crate",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": "Workflow RO-Crate",
}
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
SNAKEMAKE_IRI = "https://snakemake.readthedocs.io/"
DEFAULT_LICENSE = "https://spdx.org/licenses/MIT"
COMPLETED, FAILED = "http://schema.org/CompletedActionStatus", "http://schema.org/FailedActionStatus"
STATUS = {"succeeded": COMPLETED, "failed": FAILED, "cancelled": FAILED, "incomplete": FAILED,
           "interrupted": FAILED}
TYPES = {"string": "Text", "integer": "Integer", "number": "Float", "boolean": "Boolean"}
FORMATS = {".json": "application/json", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
            ".png": "image/png", ".yaml": "application/yaml", ".yml": "application/yaml", ".txt": "text/plain",
            ".log": "text/plain", ".ttl": "text/turtle", ".provn": "text/provenance-notation",
            ".py": "text/x-python", ".md": "text/markdown", ".smk": "text/x-snakemake",
            ".vcf": "text/plain", ".gz": "application/gzip", ".bam": "application/octet-stream"}


@functools.cache
def workflow_with_steps():
    """rocrate's ComputationalWorkflow that is also a HowTo: a workflow that links to its steps must be one
    (Provenance Run Crate). Made on first use: rocrate is imported only when a crate is built."""
    from rocrate.model.computationalworkflow import ComputationalWorkflow

    class WorkflowWithSteps(ComputationalWorkflow):
        TYPES = ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"]
    return WorkflowWithSteps


def encoding_format(path: str) -> str:
    """A MIME type for a file name: ours, else the platform's, else Snakefiles as text, else octet-stream."""
    name = os.path.basename(path)
    if name == "Snakefile":
        return "text/x-snakemake"
    return FORMATS.get(os.path.splitext(name)[1].lower()) or mimetypes.guess_type(name)[0] \
        or "application/octet-stream"


def value_type(schema: dict) -> str:
    """The FormalParameter additionalType of a contract property: its JSON Schema type, or of a union such as
    ["number", "null"] the one non-null type (Text when the union has several or the schema says none)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        named = [k for k in kind if isinstance(k, str) and k != "null"]
        kind = named[0] if len(named) == 1 else None
    return TYPES.get(kind, "Text") if isinstance(kind, str) else "Text"


def folder_files(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES and not d.startswith("."))
        out += [Path(dirpath) / n for n in sorted(filenames)
                if n not in IGNORED_NAMES and not n.endswith(".pyc") and not n.startswith(".")]
    return out


def rel_path(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return f"external/{Path(path).name}"


def resolve(root: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else Path(root) / path


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in str(text)).strip("-") or "x"
