"""Sensitive values in records: a keyed hash (HMAC-SHA256) under a per-registry key, never the value.

A plain sha256 of a secret lets anyone who can guess it confirm the guess
against the record. So wherever a value the contract marks `x-sensitive: true`
would be recorded (the canonical invocation and invocation.json, the PROV
record, RO-Crates, `snakegate diff`), it is replaced by
`hmac-sha256:<hex>` over its canonical JSON, keyed with a random 32-byte key
that lives at `<registry>/.snakegate/secret.key`: outside every run folder,
created on first use with mode 0600 in a 0700 folder that git ignores. The same
value under the same key always gives the same hash, so invocation ids stay
stable; without the key a guess cannot be checked.

Reads and creates only the key file, and rewrites a file scrubbed of secrets whole with an exact mode
(`replace_file`, for the run's logs and the chat's audit log); never logs or returns a key.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from snakegate.provenance.hashing import canonical_json
from snakegate.provenance.private import private_path

KEY_DIR = ".snakegate"
KEY_FILE = "secret.key"
PREFIX = "hmac-sha256:"
_KEYED = re.compile(r"hmac-sha256:[0-9a-f]{64}")
_MARK = re.compile(r"\[sensitive(?: hmac-sha256:[0-9a-f]{12})?\]")  # what scrub() leaves in a secret's place
_KEY_BYTES = 32


class SecretKeyError(Exception):
    """The registry's key cannot be read or made safely; the message names the file and the fix."""


def key_path(registry_root: str | os.PathLike) -> Path:
    return Path(registry_root) / KEY_DIR / KEY_FILE


def registry_key(registry_root: str | os.PathLike) -> bytes:
    """The registry's key, created (0600, in a git-ignored 0700 folder) the first time it is needed."""
    path = key_path(registry_root)
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    folder = path.parent
    tmp = folder / f".{KEY_FILE}.tmp-{os.getpid()}"
    try:
        private_path(folder)  # owner-only, and ignoring itself in whatever repository holds the registry
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, os.urandom(_KEY_BYTES).hex().encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        # a hard link appears complete or not at all, and fails when another process linked first
        os.link(tmp, path)
    except FileExistsError:
        pass  # another process made it first: use theirs
    except OSError as exc:
        raise SecretKeyError(f"cannot create the key for sensitive values at {path} ({exc.strerror or exc}); "
                             f"make {folder.parent} writable") from None
    finally:
        tmp.unlink(missing_ok=True)
    return _read_key(path)


def existing_key(registry_root: str | os.PathLike) -> bytes:
    """The registry's key when it exists, never created (a cluster job checks a keyed hash with it).
    FileNotFoundError when there is none; SecretKeyError when it is unsafe or unreadable."""
    return _read_key(key_path(registry_root))


def _read_key(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SecretKeyError(f"cannot read the key for sensitive values at {path} ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        text = os.read(fd, 4096).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    if mode & 0o077:
        raise SecretKeyError(f"{path} can be read by other users (mode {stat.filemode(mode)}); "
                             f"run `chmod 600 {path}` (anyone who can read it can confirm a guessed secret)")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise SecretKeyError(f"{path} does not hold a key (64 hex digits); remove it and a new one is made, "
                             "after which earlier runs' keyed hashes can no longer be compared")
    return key


def keyed_hash(key: bytes, value: Any) -> str:
    """`hmac-sha256:<hex>` of the value's canonical JSON under `key`."""
    return PREFIX + hmac.new(key, canonical_json(value).encode("utf-8"), hashlib.sha256).hexdigest()


def is_keyed_hash(value: Any) -> bool:
    return isinstance(value, str) and _KEYED.fullmatch(value) is not None


def walk(schema: Any, value: Any, parts: tuple = ()):
    """(parts, subschema, value) for every (sub)value, following properties/additionalProperties/items."""
    if not isinstance(schema, dict):
        return
    if parts:
        yield parts, schema, value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k, extra if isinstance(extra, dict) else None)
            if isinstance(sub, dict):
                yield from walk(sub, v, parts + (k,))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from walk(schema["items"], item, parts + (i,))


def sensitive_values(schema: dict, params: Any) -> dict[tuple, Any]:
    """{path parts: value} of every `x-sensitive: true` value; a sensitive object or array is one value."""
    found: dict[tuple, Any] = {}
    if not isinstance(params, dict):
        return found
    for parts, sub, value in walk(schema or {}, params):
        if sub.get("x-sensitive") is True and not any(parts[:n] in found for n in range(1, len(parts))):
            found[parts] = value
    return found


# What the chat and the MCP server show in place of a sensitive value: never a secret itself.
PLACEHOLDER = "<redacted>"


def secret_strings(values) -> list[str]:
    """The scalar text inside sensitive values, longest first (so a secret inside another is replaced
    last); values under 3 characters are left out (replacing "1" or "no" everywhere would mangle ordinary
    words). Keyed hashes and the placeholder are not secrets."""
    out: set[str] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
            text = str(item)
            if len(text) >= 3 and text != PLACEHOLDER and not is_keyed_hash(text):
                out.add(text)
    return sorted(out, key=len, reverse=True)


def redact(schema: dict, params: Any, key: bytes) -> tuple[Any, list[str]]:
    """A copy of `params` with every sensitive value replaced by its keyed hash, and the secret strings
    found (for `scrub`). A value that already is a keyed hash (read back from a record) stays as it is."""
    out = copy.deepcopy(params)
    found = sensitive_values(schema, params)
    for parts, value in found.items():
        if is_keyed_hash(value):
            continue
        target = out
        for p in parts[:-1]:
            target = target[p]
        target[parts[-1]] = keyed_hash(key, value)
    return out, secret_strings(found.values())


def scrub(text: str | None, secrets: list[str], key: bytes | None) -> str | None:
    """`text` with each secret replaced by `[sensitive hmac-sha256:<first 12 hex>]` (its keyed hash); without a
    key (the registry's cannot be read) by a bare `[sensitive]`: a secret is never left in for want of a key.
    One pass, longest secret first, and a mark already there is left as it is: scrubbing twice changes nothing
    (a short secret such as "256" could otherwise be found again inside a mark)."""
    secrets = [secret for secret in secrets or () if secret]
    if not text or not any(secret in text for secret in secrets):
        return text
    found = re.compile(f"({_MARK.pattern})|" + "|".join(map(re.escape, sorted(secrets, key=len, reverse=True))))

    def mark(m: re.Match) -> str:
        if m.group(1):
            return m.group(0)
        return f"[sensitive {keyed_hash(key, m.group(0))[:len(PREFIX) + 12]}]" if key is not None else "[sensitive]"

    return found.sub(mark, text)


def replace_file(path: Path, payload: bytes, mode: int) -> None:
    """`payload` into `path` whole or not at all, with exactly `mode` from its first byte (a file that held a
    secret, rewritten without it). A unique temp name beside it: two writers never share one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
