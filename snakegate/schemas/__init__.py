"""Meta-schemas of the snakegate contract, shipped as package data (snakegate.schemas)."""
