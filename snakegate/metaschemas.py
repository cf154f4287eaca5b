"""Access to the meta-schemas shipped in `schemas/` (package `snakegate.schemas`)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from jsonschema import Draft202012Validator


@cache
def load(name: str) -> dict:
    """Load `schemas/<name>` (e.g. 'workflow.schema.json')."""
    return json.loads(resources.files("snakegate.schemas").joinpath(name).read_text(encoding="utf-8"))


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load(name), format_checker=Draft202012Validator.FORMAT_CHECKER)


def artifact_types() -> dict[str, dict]:
    return load("artifact-types.json")["types"]
