"""Provenance: W3C PROV documents, git SHAs and file hashes for every run (import name snakegate.provenance)."""
