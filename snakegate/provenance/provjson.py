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

Pure: records in, text out; nothing is read or written here.
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
    enc = _Encoder()
    value, attrs = enc.value, enc.attrs
    out = ['{\n "prefix": ' + json.dumps(doc.namespaces, ensure_ascii=False)]
    grouped: dict[str, list[str]] = {kind: [] for kind in _ELEMENTS}
    for ident, (kind, start, end, record) in doc.elements.items():
        if kind == "activity" and (start or end):
            pairs = ([("prov:startTime", start)] if start else []) + ([("prov:endTime", end)] if end else [])
            pairs += record.items()
        else:
            pairs = record.items()
        grouped[kind].append("  " + _str(ident) + ": " + attrs(pairs))
    for kind in _ELEMENTS:
        if grouped[kind]:
            out.append(f' "{kind}": {{\n' + ",\n".join(grouped[kind]) + "\n }")
    by_kind: dict[str, list[str]] = {}
    # formal attribute names and identifiers repeat on every relation (a file id on four): encode each once
    keys = {kind: tuple(_str(name) + ": " for name in names) for kind, names in RELATIONS.items()}
    encoded: dict[str, str] = {}
    n = 0
    for kind, formal, record in doc.relations:
        n += 1
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
        by_kind.setdefault(kind, []).append(f'  "_:id{n}": {{' + ", ".join(fields) + "}")
    for kind, lines in by_kind.items():
        out.append(f' "{kind}": {{\n' + ",\n".join(lines) + "\n }")
    return ",\n".join(out) + "\n}\n"
