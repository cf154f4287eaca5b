"""Typed records shared by the core: the workflow manifest, gate errors, the canonical invocation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ErrorCode = Literal[
    "unknown_workflow", "version_mismatch", "invalid_yaml", "required", "type", "range", "enum",
    "pattern", "unknown_param", "path_outside_roots", "not_found", "format", "column_missing", "dag",
    "invocation_mismatch", "preflight", "tool_missing", "package_missing", "sample_sheet", "secret_key",
    # hostile run-config files and shapes (snakegate.config.read, snakegate.config.shape)
    "yte_config", "python_tag", "duplicate_key", "yaml_bomb", "too_deep", "too_large",
    # what runs is what was gated (snakegate.run.entry, snakegate.run.pinning)
    "run_exists", "input_changed",
    # a plan of several steps (snakegate.plan.prove): how its steps fit together
    "plan_shape", "plan_unknown_step", "plan_self_reference", "plan_cycle", "plan_unknown_output",
    "plan_output_not_made", "plan_type_mismatch", "plan_not_a_file", "plan_columns_unknown", "plan_ambiguous_value",
]


class Maintainer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    github: str | None = None
    email: str | None = None


class ParamResource(BaseModel):
    """A resource that follows a param: ceil(params[param] * times + plus)."""

    model_config = ConfigDict(extra="forbid")
    param: str
    times: float = 1
    plus: float = 0


class RuleResources(BaseModel):
    """What one rule needs from a scheduler (snakegate.contract.resources applies it to Snakemake's rule)."""

    model_config = ConfigDict(extra="forbid")
    threads: int | ParamResource | None = None
    mem_mb: int | ParamResource | None = None
    runtime: int | ParamResource | None = None  # minutes


class RuleIO(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: dict[str, str] = Field(default_factory=dict)
    output: dict[str, str] = Field(default_factory=dict)
    resources: RuleResources | None = None


class EachItem(BaseModel):
    """Columns made from a list param's items: every template of `each` with `{}` replaced by one item."""

    model_config = ConfigDict(extra="forbid")
    param: str
    each: list[str]


class DerivedColumns(BaseModel):
    """A table output's columns computed from the params (snakegate.contract.outputs.declared_columns):
    fixed, then the header of table param `of` (restricted to `keep`, less `minus`), then `plus`, then `last`."""

    model_config = ConfigDict(extra="forbid")
    of: str | None = None
    keep: str | None = None
    minus: str | None = None
    fixed: list[str] = Field(default_factory=list)
    plus: str | list[str | EachItem] | None = None
    order: Literal["header", "keep"] = "header"  # the kept columns in the header's order, or in `keep`'s
    last: list[str] = Field(default_factory=list)


class DeclaredOutput(BaseModel):
    """workflow.yaml `outputs.<name>`: where it is, its type, and what a consumer may rely on it holding."""

    model_config = ConfigDict(extra="forbid")
    path: str
    type: str
    description: str
    columns: list[str] | DerivedColumns | None = None  # tables only
    keys: list[str] | None = None  # json only: RFC 6901 pointers that resolve in every run's file
    when: dict[str, Any] | None = None  # produced only when these params have these values (or one of a list)


class ColumnValue(BaseModel):
    """A check's value read from a table output: one aggregate of one column's numeric cells."""

    model_config = ConfigDict(extra="forbid")
    column: str
    aggregate: Literal["mean", "median", "min", "max", "sum", "count", "std"]


class ParamThreshold(BaseModel):
    """A check's threshold that is the run's value of a numeric param."""

    model_config = ConfigDict(extra="forbid")
    param: str


class Check(BaseModel):
    """workflow.yaml `evaluate.<name>`: one machine-checkable acceptance check over a declared output
    (snakegate.contract.evaluate computes it; snakegate.check.evaluate proves it well-formed).

    `value` is a JSON pointer into a json output (it may hold `{param}` placeholders, the check then holding
    for every item), or a column aggregate of a table output; the check passes when `value <test> threshold`."""

    model_config = ConfigDict(extra="forbid")
    output: str
    value: str | ColumnValue
    test: Literal[">", ">=", "<", "<=", "==", "!="]
    threshold: int | float | ParamThreshold
    says: str  # for a person: what failing means
    params: list[str] = Field(default_factory=list)  # the params to look at when it fails


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ignore_lines: list[str] = Field(default_factory=list)
    tolerance: float | None = None
    exists: bool = False


class TestSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    float_tolerance: dict[str, float] = Field(default_factory=dict)
    compare: dict[str, Comparison] = Field(default_factory=dict)
    targets: dict[str, list[str]] = Field(default_factory=dict)  # case -> the declared outputs it builds


class Tool(BaseModel):
    """An external executable a workflow needs on PATH (workflow.yaml `tools:`).

    `version_command` is run without a shell; its stdout and stderr together hold the
    version, which `version_pattern` (first group) extracts, else the first non-empty line.
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    version_command: list[str]
    version_pattern: str | None = None
    install: str


class PythonPackage(BaseModel):
    """A Python package a workflow's Snakefile imports while Snakemake parses it (workflow.yaml
    `python_packages:`): `name` as an installer knows it, `module` the name imported (default: `name`)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    module: str | None = None
    install: str

    @property
    def import_name(self) -> str:
        return self.module or self.name


class Manifest(BaseModel):
    """workflows/<id>/workflow.yaml, after it passed snakegate/schemas/workflow.schema.json."""

    model_config = ConfigDict(extra="forbid")
    id: str
    version: str
    title: str
    description: str
    tags: list[str] = Field(default_factory=list)
    maintainers: list[Maintainer]
    trust: Literal["curated", "community"]
    tools: list[Tool] = Field(default_factory=list)
    python_packages: list[PythonPackage] = Field(default_factory=list)
    rules: dict[str, RuleIO] = Field(default_factory=dict)
    outputs: dict[str, DeclaredOutput]
    evaluate: dict[str, Check] = Field(default_factory=dict)
    test: TestSettings = Field(default_factory=TestSettings)


class GateError(BaseModel):
    """One reason an invocation is refused: where, what kind, a sentence, and how to fix it."""

    path: str
    code: ErrorCode
    message: str
    hint: str | None = None
    choices: list[Any] | None = None


class Invocation(BaseModel):
    """The canonical invocation; its sha256 over canonical JSON is the invocation id."""

    workflow: str
    version: str
    workflow_hash: str
    params: dict[str, Any]
    inputs: dict[str, str]  # param path -> sha256 of the input artifact


class GateResult(BaseModel):
    ok: bool
    workflow: str | None = None
    invocation_id: str | None = None
    invocation: Invocation | None = None
    errors: list[GateError] = Field(default_factory=list)
    # params with artifact paths made absolute, as the data roots hold them
    resolved_params: dict[str, Any] | None = None
    # invocation input key -> the absolute path the gate resolved and hashed (what a run stages)
    input_files: dict[str, str] = Field(default_factory=dict)
    # what an accepting gate proved, in order, and when (UTC, ISO 8601): the PROV record's gate decision
    checks: list[str] = Field(default_factory=list)
    gated_at: str | None = None

    def summary_json(self) -> dict:
        """The `validate --json` shape."""
        return {
            "ok": self.ok,
            "invocation_id": self.invocation_id,
            "workflow": self.workflow,
            "errors": [{"path": e.path, "code": e.code, "message": e.message, "hint": e.hint} for e in self.errors],
        }
