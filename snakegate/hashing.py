"""Alias kept for callers of the old location; the hashing helpers live in snakegate.provenance.hashing."""

from snakegate.provenance.hashing import (  # noqa: F401
    IGNORED_NAMES, canonical_json, folder_files, folder_hash, sha256_file, sha256_text,
)
