"""A run as a Workflow Run RO-Crate (Provenance Run Crate profile): `export` writes it, `from_prov`
reads what it needs from prov.json, `validate` runs roc-validator as a command.
"""
