"""The registry: where things are (`settings`) and the workflows it holds (`workflows`).

Kept light on import: `settings` is read inside every cluster job (tomllib and dataclasses only).
"""
