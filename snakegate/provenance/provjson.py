"""PROV-JSON written directly from a Document's records, one record per line.

The `prov` package needs seconds to build and serialise the objects of a
10,000-job run; this writer needs a small part of that. It is allowed on one
condition, which tests prove: `prov` reads every document written here into a
`ProvDocument` equal to the one `Document.to_prov()` builds through prov's API
(a hypothesis property test over random documents, plus the real run of every
curated workflow). So the encoding follows prov's own PROV-JSON writer:
strings stay JSON strings and booleans JSON booleans; integers are typed
`xsd:int`, `xsd:long` or `xsd:integer` by magnitude and floats `xsd:double`,
both with their text in "$"; qualified names are `xsd:QName`; an attribute
with several values is a list; anonymous relations are `_:id1`, `_:id2`, …
in the order written.

Pure: records in, text out (`dump()` writes it to a file it is handed, in pieces); nothing is opened here.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from json.encoder import encode_basestring as _str

from snakegate.provenance.values import RELATIONS, Many, Q

_INT32 = 2**31
_INT64 = 2**63
_ELEMENTS = ("entity", "activity", "agent")


def _double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return float.__repr__(value)


def _datetime(value: _dt.datetime) -> str:
    offset = value.utcoffset()
    if offset is not None and (offset.total_seconds() % 60 or offset.microseconds):
        value = value.astimezone(_dt.timezone.utc)  # as prov: xsd:dateTime offsets are whole minutes
    return value.isoformat()


class _Encoder:
    """Attribute values to JSON text, with the qualified names (which repeat on every record) cached."""

    def __init__(self):
        self._names: dict[str, str] = {}

    def value(self, value) -> str:
        kind = type(value)
        if kind is str:
            return _str(value)
        if kind is Q:
            text = self._names.get(value)
            if text is None:
                text = self._names[value] = '{"$": ' + _str(value) + ', "type": "xsd:QName"}'
            return text
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            datatype = "xsd:int" if -_INT32 <= value < _INT32 else "xsd:long" if -_INT64 <= value < _INT64 \
                else "xsd:integer"
            return f'{{"$": "{value}", "type": "{datatype}"}}'
        if kind is float:
            return f'{{"$": "{_double(value)}", "type": "xsd:double"}}'
        if kind is Many:
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, _dt.datetime):
            return '{"$": ' + _str(_datetime(value)) + ', "type": "xsd:dateTime"}'
        if isinstance(value, str):  # a str subclass other than Q: a plain string
            return _str(str(value))
        raise TypeError(f"a PROV attribute value cannot be a {kind.__name__} ({value!r})")

    def attrs(self, pairs) -> str:
        return "{" + ", ".join(_str(k) + ": " + self.value(v) for k, v in pairs) + "}"


def dumps(doc) -> str:
    """The document as PROV-JSON text."""
    return "".join(chunks(doc))


def dump(doc, fh) -> None:
    """The document as PROV-JSON, written to the text file `fh` piece by piece: the same text as dumps() without
    ever holding it whole (28 MB, and three copies of it while it was joined, at 10,000 jobs)."""
    write = fh.write
    for piece in chunks(doc):
        write(piece)


def chunks(doc):
    """The PROV-JSON text in pieces, in order: elements grouped by kind (entity, activity, agent), then relations
    grouped by kind in the order each kind first appears, each numbered `_:id<n>` in the order written."""
    enc = _Encoder()
    value, attrs = enc.value, enc.attrs
    yield '{\n "prefix": ' + json.dumps(doc.namespaces, ensure_ascii=False)
    for wanted in _ELEMENTS:
        first = True
        for ident, (kind, start, end, record) in doc.elements.items():
            if kind != wanted:
                continue
            if kind == "activity" and (start or end):
                pairs = ([("prov:startTime", start)] if start else []) + ([("prov:endTime", end)] if end else [])
                pairs += record.items()
            else:
                pairs = record.items()
            yield (f',\n "{kind}": {{\n  ' if first else ",\n  ") + _str(ident) + ": " + attrs(pairs)
            first = False
        if not first:
            yield "\n }"
    # formal attribute names and identifiers repeat on every relation (a file id on four): encode each once
    keys = {kind: tuple(_str(name) + ": " for name in names) for kind, names in RELATIONS.items()}
    encoded: dict[str, str] = {}
    kinds = list(dict.fromkeys(kind for kind, _formal, _record in doc.relations))
    for wanted in kinds:  # one pass per kind (a dozen at most), so no kind's lines are held to group them
        first = True
        for n, (kind, formal, record) in enumerate(doc.relations, start=1):
            if kind != wanted:
                continue
            prefixes = keys[kind]
            fields = []
            for i, v in enumerate(formal):
                if v is not None:
                    text = encoded.get(v)
                    if text is None:
                        text = encoded[v] = _str(v)
                    fields.append(prefixes[i] + text)
            if record:
                fields += [_str(k) + ": " + value(v) for k, v in record.items()]
            yield (f',\n "{kind}": {{\n' if first else ",\n") + f'  "_:id{n}": {{' + ", ".join(fields) + "}"
            first = False
        yield "\n }"
    yield "\n}\n"
