"""The records of a run's PROV document, and their serialisation by the `prov` package.

capture.py adds elements (entity/activity/agent, one record per identifier,
attributes merged) and relations to a `Document`, a light list of records;
`to_prov()` turns it into a `prov.model.ProvDocument` and `write()` writes
prov.json (PROV-JSON), prov.provn (PROV-N) and prov.ttl (PROV-O Turtle) with
prov's own serialisers, so the three files carry the same identifiers.

prov.json is the record; PROV-N and Turtle are renderings of it. prov writes
them slowly (at 1,000 jobs PROV-N takes 0.9 s of a 1.9 s capture; at 10,000
jobs the PROV-O encoding alone takes 21 s), so a big run writes prov.json only
and `ensure_rendering()` makes prov.provn or prov.ttl from it, with prov's own
reader and writers, the first time one is asked for (`snakegate prov`,
`snakegate export`). Small runs (every curated workflow) write all three.

Identifiers are "prefix:local" strings; `local()` makes any text a legal
local part (percent-encoding what PROV-N or an IRI would not accept).
Attribute values are str, int, bool, datetime or `Q` (a qualified-name value).
No files are read here; `write()` writes the three files.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from pathlib import Path
from urllib.parse import quote


# The fixed namespaces of every snakegate PROV document.
NAMESPACES = {
    "sg": "https://snakegate.invalid/ns#",  # snakegate's own terms (attributes and types)
    "run": "https://snakegate.invalid/run/",  # run:<run_id>, run:<run_id>/job/<rule>[/<wildcards>]
    "file": "https://snakegate.invalid/file/",  # file:<path relative to the registry root>
    "abs": "https://snakegate.invalid/abs/",  # abs:<absolute path without the leading />, outside the registry
    "inv": "https://snakegate.invalid/invocation/",  # inv:<invocation id>
    "wf": "https://snakegate.invalid/workflow/",  # wf:<workflow id>/<content hash>
    "registry": "https://snakegate.invalid/registry/",  # registry:<git commit> | registry:no-git
    "agent": "https://snakegate.invalid/agent/",  # agent:snakemake, agent:person/<name>, ...
    "dct": "http://purl.org/dc/terms/",
}

FILES_WRITTEN = ("prov.json", "prov.provn", "prov.ttl")
# up to this many records prov.ttl is pretty Turtle with prefixes (about 500 jobs), beyond it N-Triples syntax
TURTLE_PRETTY_MAX_RECORDS = 5000
# up to this many records (about 100 jobs, every curated workflow) a run writes prov.provn and prov.ttl at once;
# a bigger run defers them to ensure_rendering(): they would be most of its provenance cost (see the module doc)
EAGER_RENDERINGS_MAX_RECORDS = 1000
RENDERINGS = ("prov.provn", "prov.ttl")


class Q(str):
    """A qualified-name attribute value ("prefix:local"), as opposed to a string literal."""

    __slots__ = ()


def local(text: str) -> str:
    """`text` as a local part legal in PROV-N, Turtle IRIs and PROV-JSON: ASCII letters, digits and
    `/_.-~` stay, everything else is percent-encoded (so identifiers never need escaping)."""
    text = str(text)
    if _PLAIN_LOCAL.fullmatch(text):
        return text
    out = quote(text, safe="/")
    # PROV-N: a local part may not start with '-' or '.', nor end with '.'
    if out[:1] in ("-", "."):
        out = f"%{ord(out[0]):02X}" + out[1:]
    if out.endswith("."):
        out = out[:-1] + "%2E"
    return out or "_"


_PLAIN_LOCAL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_/.-]*[A-Za-z0-9_/-])?")


def time_text(value: _dt.datetime | str) -> str:
    """The xsd:dateTime lexical form prov writes (ISO 8601, offset kept); text is taken as already formatted."""
    return value if isinstance(value, str) else value.isoformat()


class Document:
    """Elements (entity/activity/agent, one record per id) and anonymous relations, in insertion order."""

    def __init__(self, namespaces: dict[str, str] | None = None):
        self.namespaces = dict(NAMESPACES if namespaces is None else namespaces)
        # id -> [kind, start, end, attrs]
        self.elements: dict[str, list] = {}
        # (kind, formal values tuple, attrs)
        self.relations: list[tuple[str, tuple, dict]] = []

    # ---- building ---------------------------------------------------------------------------
    def _element(self, kind: str, ident: str, attrs: dict | None, start=None, end=None) -> str:
        # times are kept as their xsd:dateTime text: formatted once, written three times
        start = time_text(start) if start is not None else None
        end = time_text(end) if end is not None else None
        existing = self.elements.get(ident)
        if existing is None:
            self.elements[ident] = [kind, start, end, {k: v for k, v in (attrs or {}).items() if v is not None}]
        else:
            if existing[0] != kind:
                raise ValueError(f"{ident} is already a PROV {existing[0]}, cannot also be a {kind}")
            for k, v in (attrs or {}).items():
                if v is not None:
                    existing[3].setdefault(k, v)
            existing[1] = existing[1] or start
            existing[2] = existing[2] or end
        return ident

    def entity(self, ident: str, attrs: dict | None = None) -> str:
        return self._element("entity", ident, attrs)

    def activity(self, ident: str, start: _dt.datetime | None = None, end: _dt.datetime | None = None,
                 attrs: dict | None = None) -> str:
        return self._element("activity", ident, attrs, start, end)

    def agent(self, ident: str, attrs: dict | None = None) -> str:
        return self._element("agent", ident, attrs)

    def _relation(self, kind: str, formal: tuple, attrs: dict | None = None) -> None:
        self.relations.append((kind, formal, {k: v for k, v in (attrs or {}).items() if v is not None}))

    def used(self, activity: str, entity: str, role: str | None = None) -> None:
        self._relation("used", (activity, entity, None), {"prov:role": role})

    def generated(self, entity: str, activity: str, role: str | None = None) -> None:
        self._relation("wasGeneratedBy", (entity, activity, None), {"prov:role": role})

    def derived(self, generated: str, used: str, activity: str | None = None) -> None:
        self._relation("wasDerivedFrom", (generated, used, activity, None, None))

    def associated(self, activity: str, agent: str, plan: str | None = None, role: str | None = None) -> None:
        self._relation("wasAssociatedWith", (activity, agent, plan), {"prov:role": role})

    def attributed(self, entity: str, agent: str) -> None:
        self._relation("wasAttributedTo", (entity, agent))

    def delegated(self, delegate: str, responsible: str) -> None:
        self._relation("actedOnBehalfOf", (delegate, responsible, None))

    def informed(self, informed: str, informant: str) -> None:
        self._relation("wasInformedBy", (informed, informant))

    # ---- serialisation: the `prov` package's own ---------------------------------------------
    def to_prov(self):
        """The document as a `prov.model.ProvDocument`, record for record, in insertion order."""
        from prov.model import ProvDocument

        doc = ProvDocument()
        for prefix, uri in self.namespaces.items():
            doc.add_namespace(prefix, uri)
        qn = doc.valid_qualified_name

        def attrs_of(attrs: dict) -> dict:
            return {k: (qn(v) if type(v) is Q else v) for k, v in attrs.items()}

        for ident, (kind, start, end, attrs) in self.elements.items():
            if kind == "activity":
                doc.activity(ident, _dt.datetime.fromisoformat(start) if start else None,
                             _dt.datetime.fromisoformat(end) if end else None, attrs_of(attrs))
            else:
                getattr(doc, kind)(ident, attrs_of(attrs))
        for kind, formal, attrs in self.relations:
            a = attrs_of(attrs) or None
            if kind == "used":
                doc.used(formal[0], formal[1], formal[2], None, a)
            elif kind == "wasGeneratedBy":
                doc.wasGeneratedBy(formal[0], formal[1], formal[2], None, a)
            elif kind == "wasDerivedFrom":
                doc.wasDerivedFrom(*formal, None, a)
            elif kind == "wasAssociatedWith":
                doc.wasAssociatedWith(formal[0], formal[1], formal[2], None, a)
            elif kind == "wasAttributedTo":
                doc.wasAttributedTo(formal[0], formal[1], None, a)
            elif kind == "actedOnBehalfOf":
                doc.actedOnBehalfOf(formal[0], formal[1], formal[2], None, a)
            elif kind == "wasInformedBy":
                doc.wasInformedBy(formal[0], formal[1], None, a)
            else:  # pragma: no cover - the builder methods above are the only way in
                raise ValueError(f"unknown PROV relation {kind}")
        return doc

    @staticmethod
    def turtle_of(doc) -> str:
        """prov's PROV-O graph as Turtle. A big graph is written in the N-Triples subset of Turtle:
        rdflib's pretty Turtle writer sorts and groups every subject and costs as much again as
        prov's encoding, while N-Triples is a plain pass (and any Turtle reader reads it)."""
        records = len(doc.records)
        return doc.serialize(format="rdf", rdf_format="turtle" if records <= TURTLE_PRETTY_MAX_RECORDS else "nt")

    def json_text(self) -> str:
        return self.to_prov().serialize(format="json", indent=1) + "\n"

    def to_json(self) -> dict:
        return json.loads(self.json_text())

    def provn_text(self) -> str:
        return self.to_prov().get_provn() + "\n"

    def turtle_text(self) -> str:
        return self.turtle_of(self.to_prov())

    def write(self, folder: Path, renderings_max_records: int = EAGER_RENDERINGS_MAX_RECORDS) -> list[Path]:
        """Write prov.json into `folder`, and prov.provn and prov.ttl when the document has at most
        `renderings_max_records` records (else `ensure_rendering()` writes them when first asked).
        Each file is written then renamed into place."""
        doc = self.to_prov()
        folder = Path(folder)
        paths = [_write_atomic(folder / "prov.json", doc.serialize(format="json", indent=1) + "\n")]
        eager = len(doc.records) <= renderings_max_records
        for name in RENDERINGS:
            if eager:
                paths.append(_write_atomic(folder / name, _render(doc, name)))
            else:  # one left from an earlier capture of this folder would no longer match prov.json
                (folder / name).unlink(missing_ok=True)
        return paths


def _render(doc, name: str) -> str:
    return doc.get_provn() + "\n" if name == "prov.provn" else Document.turtle_of(doc)


def _write_atomic(path: Path, text: str) -> Path:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def ensure_rendering(run_dir: Path, name: str) -> Path:
    """runs/<id>/<name> (prov.provn or prov.ttl), made from prov.json by prov (its PROV-JSON reader and
    PROV-N or PROV-O writer) when the run deferred it. Raises FileNotFoundError without prov.json and
    compare.ProvMissing when prov.json is not PROV-JSON."""
    if name not in RENDERINGS:
        raise ValueError(f"{name} is not a rendering of prov.json (one of {', '.join(RENDERINGS)})")
    path = Path(run_dir) / name
    if path.is_file():
        return path
    from prov.model import ProvDocument

    from snakegate.provenance.compare import ProvMissing

    source = Path(run_dir) / "prov.json"
    try:
        doc = ProvDocument.deserialize(source=str(source), format="json")
    except FileNotFoundError:
        raise
    except Exception as exc:  # prov raises whatever its JSON reader meets; any of it means the same thing
        raise ProvMissing(f"{source} is not valid PROV-JSON ({type(exc).__name__}: {exc}), so {name} cannot be "
                          f"made from it; `snakegate verify {Path(run_dir).name}` shows what else changed") from None
    return _write_atomic(path, _render(doc, name))
