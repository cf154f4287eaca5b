"""The records of a run's PROV document and how each serialisation is made.

capture.py adds elements (entity/activity/agent, one record per identifier,
attributes merged) and relations to a `Document`, a light list of records.
Three serialisations:

- prov.json (PROV-JSON), the record: written directly from the records by
  provjson.py, because the `prov` package spends seconds per 10,000 jobs
  building its objects and serialising them. Tests prove that prov reads what
  we write into a `ProvDocument` equal to the one `to_prov()` builds through
  prov's API (a property test over random documents and every curated
  workflow's real run).
- prov.provn (PROV-N), made by prov from `to_prov()`.
- prov.ttl (PROV-O Turtle), made by prov's PROV-O encoder and rdflib, plus the
  plain `prov:wasAssociatedWith` triple of each qualified association (prov's
  reader folds it into the qualified relation). A usage, generation, start or
  derivation with a role or a time is written in its qualified form only, as prov
  writes it: prov's reader would read a plain triple beside it as a second
  relation, and prov.ttl reads back into exactly the document prov.json holds
  (queries match either form: `prov:used|prov:qualifiedUsage/prov:entity`).

PROV-N and Turtle are renderings of prov.json. prov writes them slowly (PROV-N
0.9 s at 1,000 jobs, PROV-O 21 s at 10,000), so a big run writes prov.json only,
a run writes prov.ttl only when it is first asked for (rdflib and the PROV-O
encoder were most of a small run's fixed cost), and `ensure_rendering()` makes
prov.provn or prov.ttl from prov.json, with prov's own reader and writers.

Identifiers are "prefix:local" strings; `local()` makes any text a legal local
part. Attribute values are str, int, float, bool, datetime, `Q` (a qualified
name) or `Many` (several values of one attribute). No files are read here;
`write()` writes the files.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

from snakegate.provenance import vocab
from snakegate.provenance.values import (  # noqa: F401 - the record vocabulary, used with Document
    PLAIN_RELATIONS, RELATIONS, TIME_FORMALS, Many, Q, local, time_text)

FILES_WRITTEN = ("prov.json", "prov.provn", "prov.ttl")
# up to this many records prov.ttl is pretty Turtle with prefixes (about 500 jobs), beyond it N-Triples syntax
TURTLE_PRETTY_MAX_RECORDS = 5000
# up to this many records (about 100 jobs, every curated workflow) a run writes prov.provn at once; a bigger run
# defers it to ensure_rendering(): it would be most of its provenance cost (see the module doc)
EAGER_RENDERINGS_MAX_RECORDS = 1000
RENDERINGS = ("prov.provn", "prov.ttl")
# prov.ttl is made only when first asked for (a query, `snakegate prov --format ttl`, export), whatever the run's
# size: rdflib and prov's PROV-O encoder cost a small run more than its whole record, for a file few runs need
EAGER_RENDERINGS = ("prov.provn",)

class Document:
    """Elements (entity/activity/agent, one record per id) and anonymous relations, in insertion order."""

    def __init__(self, namespaces: dict[str, str] | None = None):
        self.namespaces = dict(vocab.NAMESPACES if namespaces is None else namespaces)
        # id -> [kind, start, end, attrs]
        self.elements: dict[str, list] = {}
        # (kind, formal values tuple, attrs)
        self.relations: list[tuple[str, tuple, dict]] = []

    def __len__(self) -> int:
        return len(self.elements) + len(self.relations)

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

    def activity(self, ident: str, start: _dt.datetime | str | None = None, end: _dt.datetime | str | None = None,
                 attrs: dict | None = None) -> str:
        return self._element("activity", ident, attrs, start, end)

    def agent(self, ident: str, attrs: dict | None = None) -> str:
        return self._element("agent", ident, attrs)

    def add_values(self, ident: str, attr: str, *values) -> None:
        """Append values to a (multi-valued) attribute of an existing element, skipping ones it has."""
        attrs = self.elements[ident][3]
        current = attrs.get(attr)
        have = list(current) if isinstance(current, Many) else ([] if current is None else [current])
        have += [v for v in values if v not in have]
        attrs[attr] = Many(have) if len(have) > 1 else have[0]

    def relation(self, kind: str, *formal, attrs: dict | None = None) -> None:
        """A relation of `kind` (see RELATIONS) with its formal values in PROV-N order (None for '-')."""
        names = RELATIONS[kind]
        if len(formal) > len(names):
            raise ValueError(f"{kind} takes at most {len(names)} formal values")
        formal = tuple(time_text(v) if v is not None and names[i] in TIME_FORMALS else v for i, v in enumerate(formal))
        formal += (None,) * (len(names) - len(formal))
        self.relations.append((kind, formal, {k: v for k, v in (attrs or {}).items() if v is not None}))

    def used(self, activity: str, entity: str, role: str | None = None, time=None) -> None:
        self.relation("used", activity, entity, time, attrs={"prov:role": Q(role) if role else None})

    def generated(self, entity: str, activity: str, role: str | None = None, time=None) -> None:
        self.relation("wasGeneratedBy", entity, activity, time, attrs={"prov:role": Q(role) if role else None})

    def derived(self, generated: str, used: str, activity: str | None = None, kind: str | None = None) -> None:
        self.relation("wasDerivedFrom", generated, used, activity, attrs={"prov:type": Q(kind) if kind else None})

    def associated(self, activity: str, agent: str, plan: str | None = None, role: str | None = None) -> None:
        self.relation("wasAssociatedWith", activity, agent, plan, attrs={"prov:role": Q(role) if role else None})

    def attributed(self, entity: str, agent: str) -> None:
        self.relation("wasAttributedTo", entity, agent)

    def delegated(self, delegate: str, responsible: str) -> None:
        self.relation("actedOnBehalfOf", delegate, responsible)

    def informed(self, informed: str, informant: str, kind: str | None = None) -> None:
        self.relation("wasInformedBy", informed, informant, attrs={"prov:type": Q(kind) if kind else None})

    def started(self, activity: str, trigger: str | None = None, starter: str | None = None, time=None) -> None:
        self.relation("wasStartedBy", activity, trigger, starter, time)

    # ---- serialisation ----------------------------------------------------------------------
    def json_text(self) -> str:
        """PROV-JSON, written directly (provjson.py); prov reads it into a document equal to to_prov()."""
        from snakegate.provenance import provjson

        return provjson.dumps(self)

    def to_json(self) -> dict:
        return json.loads(self.json_text())

    def to_prov(self):
        """The document as a `prov.model.ProvDocument`, built through prov's API, in insertion order."""
        from prov.model import ProvDocument

        doc = ProvDocument()
        for prefix, uri in self.namespaces.items():
            doc.add_namespace(prefix, uri)
        qn = doc.valid_qualified_name

        def pairs(attrs: dict) -> list:
            out = []
            for k, v in attrs.items():
                for one in (v if isinstance(v, Many) else (v,)):
                    out.append((k, qn(one) if type(one) is Q else one))
            return out

        for ident, (kind, start, end, attrs) in self.elements.items():
            if kind == "activity":
                doc.activity(ident, _dt.datetime.fromisoformat(start) if start else None,
                             _dt.datetime.fromisoformat(end) if end else None, pairs(attrs))
            else:
                getattr(doc, kind)(ident, pairs(attrs))
        for kind, formal, attrs in self.relations:
            names = RELATIONS[kind]
            values = [(_dt.datetime.fromisoformat(v) if v is not None and names[i] in TIME_FORMALS else v)
                      for i, v in enumerate(formal)]
            if kind in PLAIN_RELATIONS:
                getattr(doc, kind)(*values)
            else:
                getattr(doc, kind)(*values, None, pairs(attrs) or None)
        return doc

    def provn_text(self) -> str:
        return self.to_prov().get_provn() + "\n"

    def turtle_text(self) -> str:
        return turtle_of(self.to_prov())

    def write(self, folder: Path, renderings_max_records: int = EAGER_RENDERINGS_MAX_RECORDS) -> list[Path]:
        """Write prov.json into `folder`, and prov.provn when the document has at most `renderings_max_records`
        records; `ensure_rendering()` writes the others when first asked. Each file is written then renamed
        into place."""
        from snakegate.provenance import provjson

        folder = Path(folder)
        paths = [_write_atomic(folder / "prov.json", lambda fh: provjson.dump(self, fh))]
        eager = len(self) <= renderings_max_records
        for name in RENDERINGS:
            if eager and name in EAGER_RENDERINGS:
                paths.append(_write_atomic(folder / name, _render(self.to_prov(), name)))
            else:  # one left from an earlier capture of this folder would no longer match prov.json
                (folder / name).unlink(missing_ok=True)
        return paths


# The plain PROV-O property a qualified association implies (PROV-O section 3.3: "the qualified form ... also
# implies the unqualified"): prov's reader folds it back into the one association, as it does for the plain
# triple of a communication, an attribution and a delegation, which prov writes itself. For a usage, a
# generation, a start and a derivation it reads a plain triple next to the qualified node as a second relation,
# so those stay qualified only.
SHORTCUT_PREDICATES = ("wasAssociatedWith",)
_PROV = "http://www.w3.org/ns/prov#"


def prov_o_graph(doc):
    """prov's PROV-O encoding of a ProvDocument (an rdflib Graph) plus the plain association triples: for each
    `?activity prov:qualifiedAssociation/prov:agent ?agent`, `?activity prov:wasAssociatedWith ?agent`. Added by
    walking the graph, not by a SPARQL update: rdflib's SPARQL engine costs a small run more than its whole
    Turtle (importing and parsing it, 0.5 s of CPU), for the same triples."""
    from prov.serializers.provrdf import ProvRDFSerializer
    from rdflib import URIRef

    graph = ProvRDFSerializer(doc).encode_container(doc)
    qualified, agent, plain = (URIRef(_PROV + name) for name in ("qualifiedAssociation", "agent",
                                                                 "wasAssociatedWith"))
    implied = [(activity, who) for activity, node in graph.subject_objects(qualified)
               for who in graph.objects(node, agent)]
    for activity, who in implied:
        graph.add((activity, plain, who))
    for prefix, uri in vocab.NAMESPACES.items():  # rdflib binds schema: to https://schema.org/ by default
        graph.bind(prefix, uri, override=True, replace=True)
    return graph


def turtle_of(doc) -> str:
    """The PROV-O graph as Turtle. A big graph is written in the N-Triples subset of Turtle: rdflib's
    pretty Turtle writer sorts and groups every subject and costs as much again as prov's encoding,
    while N-Triples is a plain pass (and any Turtle reader reads it)."""
    graph = prov_o_graph(doc)
    fmt = "turtle" if len(doc.records) <= TURTLE_PRETTY_MAX_RECORDS else "nt"
    return graph.serialize(format=fmt)


def _render(doc, name: str) -> str:
    return doc.get_provn() + "\n" if name == "prov.provn" else turtle_of(doc)


def _write_atomic(path: Path, text) -> Path:
    """Write `text` (a str, or a function that writes to the open file: prov.json is streamed) then rename it
    into place."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
        if callable(text):
            text(fh)
        else:
            fh.write(text)
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
