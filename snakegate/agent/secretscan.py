"""Secret-shaped text in what a person types, found before it is sent to a model.

Three kinds of find, each a `Suspect` (the value, what it looks like, the sensitive
param it was typed for when one):
- a provider's key format: `sk-…` (OpenAI, Anthropic), `ghp_…`/`github_pat_…`
  (GitHub), `AKIA…`/`ASIA…` (AWS), `xox[abpors]-…` (Slack), `AIza…` (Google),
  `hf_…` (Hugging Face), a JSON Web Token, a PEM block (`-----BEGIN …-----`);
- a phrase naming a secret: `password|token|api key|secret|key … is|:|= X`;
- a value typed next to the name of a sensitive param of the workflow being
  filled (`token abc123XYZ`, `service.password: s3cret`, `use abc123XYZ as the token`).
A phrase's value must look like one: words such as "required", "missing" or
"in" are not values, and after the bare word "key" (a sort key, a key column)
only a value with letters and digits counts. A find can be wrong; the door that
sends decides what to do with it (the chat asks the person, `snakegate ask`
refuses). Pure: text in, finds out; nothing read, written or sent from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from snakegate.agent.redact import MASKED_NOTE_RE, PLACEHOLDER
from snakegate.provenance.secrets import is_keyed_hash


@dataclass(frozen=True)
class Suspect:
    value: str = field(repr=False)
    kind: str  # what it looks like, as a sentence part: "an API key (sk-…)"
    param: str | None = None  # the sensitive param it was typed for (dotted), when one
    start: int = 0
    end: int = 0

    @property
    def hint(self) -> str:
        """A few characters to recognise it by, never the value: `sk-p…` (51 characters)."""
        lead = self.value[:4] if len(self.value) >= 12 else ""
        return f"`{lead}…` ({len(self.value)} characters)"


PROVIDERS: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("a PEM block", r"-----BEGIN [A-Z0-9 ]{1,40}-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)"),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("an API key (sk-…)", r"(?<![\w-])sk-[A-Za-z0-9_-]{20,}"),
    ("a GitHub token", r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("an AWS access key", r"(?<![\w-])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a Slack token", r"(?<![\w-])xox[abpors]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"),
    ("a Hugging Face token", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
))

# names that say what follows is a secret; the bare word "key" is weaker (a sort key, a key column)
_STRONG = (r"pass(?:word|phrase|wd)|pwd|pin|token|secret(?:[ _-]?key)?|api[ _-]?key|access[ _-]?key|"
           r"private[ _-]?key|client[ _-]?secret|credentials?")
_CONNECT = r"\s*(?:is|was|=|:|:=)\s*"
_VALUE = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|`(?P<bq>[^`\n]{1,200})`|(?P<bare>[^\s"'`]\S{0,199}))"""
_PHRASE = re.compile(rf"\b(?P<name>{_STRONG}|key)s?\b{_CONNECT}{_VALUE}", re.I)

# words that follow "the token is" without being a token
_NOT_VALUES = frozenset("""
a an the my your our its their this that it in on at of for to not no none null nil empty blank here there
above below attached same different required needed optional missing set unset ready valid invalid wrong
correct right fine ok okay expired known unknown secret secrets private sensitive hidden masked redacted
field param parameter value values please later now first next new old one given entered typed pasted
stored saved correctly also still where what which who how why when
""".split())


def find_secrets(text: str, sensitive: list[str] = ()) -> list[Suspect]:
    """Every secret-shaped value in `text`, first to last; `sensitive`: the dotted names of the sensitive
    params of the workflow being filled (a value next to one is a value for it)."""
    if not text or MASKED_NOTE_RE.match(text.strip()):
        return []
    found: list[Suspect] = []
    for name in sensitive:
        found += _for_param(text, name)
    for kind, pattern in PROVIDERS:
        found += [Suspect(m.group(0), kind, None, m.start(), m.end()) for m in pattern.finditer(text)]
    for m in _PHRASE.finditer(text):
        value, start, end = _value_of(m)
        weak = m.group("name").lower() in ("key", "keys")
        if _looks_like_value(value, strict=weak):
            found.append(Suspect(value, f"a value given as {m.group('name').lower()}", None, start, end))
    return _one_per_value(found)


def _for_param(text: str, name: str) -> list[Suspect]:
    """Values typed for the sensitive param `name`: after its name (dotted, its last part, `_` as space or
    `-`), joined by is/:/=/to or directly, or before it with "as"/"for"."""
    parts = [name, name.rsplit(".", 1)[-1]]
    spelled = {re.escape(p).replace("_", "[ _-]") for p in parts}
    names = "|".join(sorted(spelled, key=len, reverse=True))
    out = []
    after = re.compile(rf"(?<![\w.])(?:{names})\b(?P<join>{_CONNECT}|\s+to\s+|\s+)(?!(?:is|was|to)\b){_VALUE}", re.I)
    for m in after.finditer(text):
        value, start, end = _value_of(m)
        if _looks_like_value(value, strict=not m.group("join").strip()):
            out.append(Suspect(value, f"a value for the sensitive param {name}", name, start, end))
    # "use X as the token": found from the name backwards, so a long message costs one pass
    before = re.compile(rf"\s+(?:as|for)\s+(?:the\s+|my\s+|a\s+)?(?:{names})\b", re.I)
    for m in before.finditer(text):
        start = max(text.rfind(c, 0, m.start()) for c in " \t\n") + 1
        value = text[start:m.start()].strip("\"'`")
        if _looks_like_value(value, strict=True):
            start = text.index(value, start)
            out.append(Suspect(value, f"a value for the sensitive param {name}", name, start, start + len(value)))
    return out


def _value_of(m: re.Match) -> tuple[str, int, int]:
    for group in ("dq", "sq", "bq", "bare"):
        if m.groupdict().get(group) is not None:
            value, start = m.group(group), m.start(group)
            if group == "bare":  # a sentence's own punctuation is not part of the value
                value = value.rstrip(".,;:)]}")  # "!" and "?" are often part of a password
            return value, start, start + len(value)
    return "", m.start(), m.start()


def _looks_like_value(value: str, strict: bool) -> bool:
    """A value, not a word of the sentence. `strict`: letters and digits both, as a generated secret has,
    or 24 characters at least in both cases (`sample_id` is a column, `k3yS3cr3t` is not)."""
    if len(value) < 3 or value.lower() in _NOT_VALUES or value == PLACEHOLDER or is_keyed_hash(value):
        return False
    if value.startswith("<") and value.endswith(">") or set(value) <= set("*●•x.-_"):
        return False  # a placeholder or a mask, not a value
    if not strict:
        return True
    letters, digits = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return (letters and digits) or (len(value) >= 24 and mixed_case)


def _one_per_value(found: list[Suspect]) -> list[Suspect]:
    """One suspect per value (the one naming a param wins, else the first), in the order they appear;
    a value inside another found one (a JWT's part) is left out."""
    best: dict[str, Suspect] = {}
    for s in found:
        if s.value not in best or (s.param and not best[s.value].param):
            best[s.value] = s
    values = list(best)
    kept = [s for v, s in best.items() if not any(v != o and v in o for o in values)]
    return sorted(kept, key=lambda s: s.start)
