"""The values of a PROV record: relation kinds and their formal attributes, qualified names (`Q`),
several values of one attribute (`Many`), legal local parts (`local`) and times (`time_text`).

Shared by the document (snakegate.provenance.document) and its PROV-JSON writer (provjson.py); plain
data and pure functions.
"""

from __future__ import annotations

import datetime as _dt
import re
from urllib.parse import quote

# Relation kinds and their formal attributes, in PROV-N order (the order of the `formal` tuples).
RELATIONS: dict[str, tuple[str, ...]] = {
    "used": ("prov:activity", "prov:entity", "prov:time"),
    "wasGeneratedBy": ("prov:entity", "prov:activity", "prov:time"),
    "wasDerivedFrom": ("prov:generatedEntity", "prov:usedEntity", "prov:activity", "prov:generation",
                       "prov:usage"),
    "wasAssociatedWith": ("prov:activity", "prov:agent", "prov:plan"),
    "wasAttributedTo": ("prov:entity", "prov:agent"),
    "actedOnBehalfOf": ("prov:delegate", "prov:responsible", "prov:activity"),
    "wasInformedBy": ("prov:informed", "prov:informant"),
    "wasStartedBy": ("prov:activity", "prov:trigger", "prov:starter", "prov:time"),
    "wasEndedBy": ("prov:activity", "prov:trigger", "prov:ender", "prov:time"),
    "wasInfluencedBy": ("prov:influencee", "prov:influencer"),
    "specializationOf": ("prov:specificEntity", "prov:generalEntity"),
    "alternateOf": ("prov:alternate1", "prov:alternate2"),
}
# formal attributes that hold a time (xsd:dateTime text), not an identifier
TIME_FORMALS = frozenset({"prov:time"})
# relations PROV-DM defines without extra attributes
PLAIN_RELATIONS = frozenset({"specializationOf", "alternateOf"})


class Q(str):
    """A qualified-name attribute value ("prefix:local"), as opposed to a string literal."""

    __slots__ = ()


class Many(tuple):
    """Several values of one attribute (e.g. two prov:type), kept in the order given."""

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
