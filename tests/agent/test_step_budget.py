"""A constrained step fits in its reply's token budget: every free string and list is bounded by it (issue 26).

A grammar with a 512-character string and a 2,000-character say still let SmolLM2 run to max_tokens=256 (a
run id of digits, one sentence over and over). Pure: the step schema of the real tools.
"""

from __future__ import annotations

from snakegate.agent.actions.wire import (
    MAX_SAY, MAX_STRING, bounded, conversation_tools, openai_tools, step_bounds, step_schema,
)


def _bounds(schema, found=None):
    """Every (kind, maxLength / maxItems) in `schema`, at any depth."""
    found = [] if found is None else found
    if isinstance(schema, dict):
        types = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
        if "string" in types and "enum" not in schema and "const" not in schema:
            found.append(("string", schema.get("maxLength")))
        if "array" in types:
            found.append(("array", schema.get("maxItems")))
        for value in schema.values():
            _bounds(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _bounds(value, found)
    return found


def test_every_string_and_list_of_a_step_fits_a_256_token_reply():
    strings, items, say = step_bounds(256)
    found = _bounds(step_schema(openai_tools(), 256))
    assert found and all(bound is not None for _, bound in found)
    assert max(b for k, b in found if k == "string") <= max(strings, say) <= 256 * 3 // 2
    assert max(b for k, b in found if k == "array") <= items <= 32


def test_a_bigger_budget_allows_longer_answers_up_to_the_wide_bounds():
    assert step_bounds(256) < step_bounds(768) <= step_bounds(100_000) == step_bounds(None)
    assert step_bounds(None)[0] == MAX_STRING and step_bounds(None)[2] == MAX_SAY


def test_a_contract_bound_is_lowered_for_a_step_but_never_below_its_own_minimum():
    contract = {"type": "object", "properties": {
        "samples": {"type": "array", "minItems": 1, "maxItems": 5000, "items": {"type": "string"}},
        "name": {"type": "string", "minLength": 200, "maxLength": 300}}}
    tight = bounded(contract, 64, 8, tighten=True)["properties"]
    assert tight["samples"]["maxItems"] == 8 and tight["samples"]["items"]["maxLength"] == 64
    assert tight["name"]["maxLength"] == 200      # the contract's minimum wins: the gate would refuse less
    assert bounded(contract)["properties"]["samples"]["maxItems"] == 5000   # outside a step: the contract's own


def _actions(schema) -> set[str]:
    return {o["properties"]["action"]["const"] for o in schema["oneOf"] if "action" in o["properties"]}


def test_with_no_runs_a_step_cannot_ask_about_one_and_with_runs_only_about_those_there_are():
    # SmolLM2 answered "Run the PL power series on ..." with run_status {"run_id": "1234567890123…"}
    none = step_schema(conversation_tools(["tabular-profile"], runs=[]), 256)
    assert "run_status" not in _actions(none) and "compare_runs" not in _actions(none)
    assert {"validate_params", "list_runs", "search_workflows"} <= _actions(none)
    some = conversation_tools(["tabular-profile"], runs=["r-1", "r-2"])
    run_status = next(t for t in some if t["function"]["name"] == "run_status")["function"]["parameters"]
    assert run_status["properties"]["run_id"]["enum"] == ["latest", "r-1", "r-2"]
    assert "run_status" in _actions(step_schema(some, 256))
    unknown = step_schema(conversation_tools(["tabular-profile"]), 256)   # runs not known: as before
    assert "run_status" in _actions(unknown)
