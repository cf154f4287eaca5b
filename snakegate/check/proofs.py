"""The proofs of `snakegate check`, in order, and the one loop that runs them over a workflow's facts.

Each proof is a pure function `WorkflowFacts -> list[Finding]` living in its own module; to add one
(a stream's preflight proof, say), write the function and append `(function, code)` to `PROOFS`, and its
finding codes to `CODES`. A proof that crashes is an error finding with its code (fail closed: a check that
could not run never says "no findings").
"""

from __future__ import annotations

import re
from typing import Callable

from snakegate.check import edges, examples, hygiene, keys, preflights, resources, ruleio, shellquote, unprovable
from snakegate.check import declarations, evaluate, packages, scriptparams, sensitive, workfolder
from snakegate.check.facts import Finding, WorkflowFacts

CODES = (
    "manifest_invalid", "schema_invalid", "default_invalid", "undeclared_config_key", "unused_param",
    "dynamic_config_access", "artifact_not_consumed", "output_not_produced", "hidden_input", "rule_not_declared",
    "io_name_unknown", "edge_type_mismatch", "example_invalid", "dag_error", "lint", "format", "tool_missing",
    "config_not_validated", "configfile_ignored", "unknown_artifact_type", "not_statically_checked",
    "wrapper_unchecked", "conda_env_missing", "download", "hardcoded_path", "preflight_invalid", "preflight_impure",
    "resource_invalid", "resource_differs", "unseeded_random", "unquoted_shell_param",
    sensitive.CODE, declarations.CODE, declarations.UNEXERCISED, evaluate.CODE, evaluate.UNPROVEN, workfolder.CODE,
    scriptparams.CODE, packages.CODE, packages.UNDECLARED, unprovable.UNPINNED,
)

Proof = Callable[[WorkflowFacts], list[Finding]]
PROOFS: list[tuple[Proof, str]] = [
    (examples.contract_findings, "schema_invalid"),
    (keys.config_key_findings, "undeclared_config_key"),
    (keys.validation_findings, "config_not_validated"),
    (keys.configfile_findings, "configfile_ignored"),
    (examples.example_findings, "example_invalid"),
    (ruleio.io_findings, "hidden_input"),
    (workfolder.glob_findings, workfolder.CODE),
    (ruleio.rule_findings, "rule_not_declared"),
    (edges.type_findings, "unknown_artifact_type"),
    (edges.edge_findings, "edge_type_mismatch"),
    (resources.resource_findings, "resource_invalid"),
    (unprovable.rule_findings, "download"),
    (unprovable.script_findings, "hardcoded_path"),
    (scriptparams.script_param_findings, scriptparams.CODE),
    (unprovable.param_findings, "download"),
    (preflights.preflight_findings, "preflight_invalid"),
    (shellquote.unquoted_shell_params, "unquoted_shell_param"),
    (hygiene.hygiene_findings, "lint"),
    (packages.package_findings, packages.CODE),
    (sensitive.sensitive_findings, sensitive.CODE),
    (declarations.declaration_findings, declarations.CODE),
    (evaluate.evaluate_findings, evaluate.CODE),
]


def run_checks(facts: WorkflowFacts) -> list[Finding]:
    """All proofs on one workflow's facts, deduplicated; a crashing proof is an error finding."""
    found: list[Finding] = []
    for proof, code in PROOFS:
        try:
            found.extend(proof(facts))
        except Exception as exc:  # noqa: BLE001 - fail closed: a proof that crashed proved nothing
            found.append(Finding("error", facts.id, code,
                                 f"the {proof.__module__.rsplit('.', 1)[-1]}.{proof.__name__} check crashed "
                                 f"({type(exc).__name__}: {exc}), so this workflow is not proven",
                                 hint="report this with the workflow folder; until then the workflow fails the check"))
    return _merge_examples(found)


def _merge_examples(found: list[Finding]) -> list[Finding]:
    """One finding for the same problem seen with several examples, naming them all."""
    seen: dict[tuple, tuple[Finding, list[str]]] = {}
    order = []
    for fd in found:
        m = re.search(r" \(with ([^)]+)\)", fd.message)
        base = fd.message.replace(m.group(0), "") if m else fd.message
        key = (fd.severity, fd.code, fd.rule, fd.file, fd.line, base)
        if key not in seen:
            seen[key] = (fd, [])
            order.append(key)
        if m:
            seen[key][1].append(m.group(1))
    out = []
    for key in order:
        fd, labels = seen[key]
        if labels:
            msg = key[5] + f" (with {', '.join(dict.fromkeys(labels))})"
            fd = Finding(fd.severity, fd.workflow, fd.code, msg, fd.hint, fd.rule, fd.file, fd.line)
        out.append(fd)
    return out
