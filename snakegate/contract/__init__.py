"""The contract: what a workflow declares and how a value is checked against it (lowest core layer).

- `dialect`: JSON Schema 2020-12 plus snakegate's x- keywords (x-artifact, x-column-of, x-sensitive, ...).
- `artifacts`: one cheap format check per artifact type (built-in: snakegate/schemas/artifact-types.json;
  a registry's own: snakegate.toml [types.<name>]).
- `sheets`: sample sheets, a table param whose rows follow a column schema.
- `outputs`: declared outputs, `{param}` / `{sheet.column}` patterns expanded from the params.
- `resources`: per-rule resources from workflow.yaml onto Snakemake's rules.
- `evaluate`: a run's verdict from workflow.yaml's `evaluate:` checks over its outputs; `output_files`: the
  bounded reads of those outputs it is given.

Pure over the values and files it is given; never runs Snakemake, never writes.
"""
