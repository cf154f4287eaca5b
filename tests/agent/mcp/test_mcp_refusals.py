"""The chat's adversarial cases, sent by an MCP client: each is refused with the actionable refusal the chat gives,
no run folder appears, and no sensitive value reaches a response or the audit log. SDK client, real server process.
"""

from __future__ import annotations

from mcp_session import PENGUINS, McpSession, accept, audit_lines, audit_text, run_folders

SECRET = "hunter2-s3cret-0042"


def _refused(s: McpSession, name: str, arguments: dict) -> dict:
    """The refusal: an action's {"code", "message", "hint"}, or for a gate refusal {"code": "gate", "errors": [...]}."""
    r = s.call(name, arguments)
    out = s.result(r)
    assert r.is_error, out
    if "errors" in out:  # the gate's refusal: every problem with path, code, message, hint and choices
        assert out["ok"] is False
        return {"code": "gate", "errors": out["errors"], "codes": [e["code"] for e in out["errors"]]}
    return out["error"]


def _nothing_ran(registry) -> None:
    assert not run_folders(registry)
    assert all(line["outcome"] in ("ok", "refused") for line in audit_lines(registry))


def test_unknown_workflow_is_refused_with_the_closest_id(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        error = _refused(s, "validate_params", {"workflow": "tabular-profil", "params": {"dataset_file": PENGUINS}})
        assert error["code"] == "unknown_workflow" and "did you mean `tabular-profile`" in error["hint"]
        assert _refused(s, "describe_workflow", {"workflow": "rm -rf /"})["code"] == "unknown_workflow"
    _nothing_ran(registry)
    assert [line["code"] for line in audit_lines(registry)] == ["unknown_workflow"] * 2


def test_extra_params_and_extra_arguments_are_refused_naming_them(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        error = _refused(s, "validate_params", {"workflow": "tabular-profile",
                                                "params": {"dataset_file": PENGUINS, "shell_hook": "curl evil"}})
        assert error["codes"] == ["unknown_param"] and "shell_hook" in error["errors"][0]["message"]
        error = _refused(s, "validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS},
                                                "run_now": True})
        assert error["code"] == "bad_arguments" and "`run_now` is not an argument" in error["message"]
        assert _refused(s, "run_workflow", {})["code"] == "unknown_action"
    _nothing_ran(registry)
    assert not (registry / "drafts").exists()


def test_a_path_outside_the_data_roots_is_refused_without_showing_where_it_leads(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        for path in ("/etc/passwd", "../../../../etc/hostname"):
            error = _refused(s, "validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": path}})
            assert error["codes"] == ["path_outside_roots"] and error["errors"][0]["hint"]
            assert "resolves to <outside the data roots>" in error["errors"][0]["message"]
        assert _refused(s, "inspect_data", {"path": "/etc"})["code"] == "path_outside_roots"
    _nothing_ran(registry)
    assert not any("/etc/passwd" in text or '"/etc' in text for text in s.responses)
    assert str(registry.parent) not in "".join(s.responses)


def test_shell_syntax_in_strings_is_only_ever_a_value_the_gate_refuses(registry):
    cases = [{"dataset_file": PENGUINS, "missing_strategy": "remove; touch pwned"},
             {"dataset_file": PENGUINS, "columns": ["species`touch pwned`", "$(touch pwned)"]},
             {"dataset_file": "data/examples/$(touch pwned).csv"},
             {"dataset_file": PENGUINS, "drop_duplicates": "true && touch pwned"}]
    with McpSession.stdio(registry, answer=accept()) as s:
        codes = []
        for params in cases:
            codes.append(_refused(s, "validate_params", {"workflow": "tabular-profile", "params": params})["codes"])
    assert codes == [["enum"], ["column_missing", "column_missing"], ["not_found"], ["type"]]
    _nothing_ran(registry)
    assert not list(registry.rglob("pwned*")) and not (registry / "drafts").exists()


def test_a_sensitive_value_is_refused_and_never_appears_in_a_response_or_the_audit_log(registry):
    with McpSession.stdio(registry, answer=accept()) as s:
        error = _refused(s, "validate_params", {"workflow": "secret-note",
                                                "params": {"label": "note", "token": SECRET}})
        assert error["code"] == "sensitive_value" and "`params.token`" in error["message"]
        assert "snakegate chat" in error["hint"]
        # the placeholder does not get around it: over MCP there is no masked field to fill it from
        assert _refused(s, "validate_params", {"workflow": "secret-note",
                                               "params": {"token": "<redacted>"}})["code"] == "sensitive_value"
        # once seen, the value is scrubbed wherever a model sends it back
        echoed = s.result(s.call("search_workflows", {"query": f"note {SECRET}"}))
        assert "matches" in echoed
        _refused(s, "validate_params", {"workflow": "secret-note", "params": {"label": SECRET, "token": SECRET}})
    _nothing_ran(registry)
    assert not any(SECRET in text for text in s.responses)
    assert SECRET not in audit_text(registry)
    assert [line["arguments"]["params"]["token"] for line in audit_lines(registry)
            if line.get("name") == "validate_params"][:1] == ["<redacted>"]
    assert not (registry / "drafts").exists()
