"""One confirmation runs one draft once, only a real tick counts, and many validations at once all get their draft.

The MCP SDK's own client against a real `snakegate mcp` process (stdio) over a throw-away registry; the one run
that starts is a real Snakemake run. The replay is sent below the client's automatic retry loop
(`client.session.call_tool(..., allow_input_required=True)`), as a client that keeps the sealed requestState
and sends it again would.
"""

from __future__ import annotations

import json

import anyio
import pytest
from mcp_types import ElicitResult, InputRequiredResult

from mcp_session import PENGUINS, McpSession, accept, audit_lines, decline, run_folders

VALIDATE = {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}}
VALIDATIONS_AT_ONCE = 1000


def _validated(s: McpSession) -> dict:
    out = s.result(s.call("validate_params", VALIDATE))
    assert out["ok"], out
    return out


def _answer(result) -> dict:
    return json.loads(result.content[0].text)


def test_one_accepted_confirmation_replayed_three_times_at_once_starts_one_run(registry):
    with McpSession.stdio(registry, answer=decline()) as s:
        args = {"invocation_id": _validated(s)["invocation_id"]}
        asked = s.portal.call(lambda: s.client.session.call_tool("execute", args, allow_input_required=True))
        assert isinstance(asked, InputRequiredResult) and asked.request_state
        accepted = {key: accept("Grace Hopper") for key in asked.input_requests}

        async def three_at_once():
            results: list = [None] * 3

            async def send(i: int) -> None:
                with anyio.fail_after(240):
                    results[i] = await s.client.session.call_tool(
                        "execute", args, input_responses=accepted, request_state=asked.request_state,
                        allow_input_required=True)

            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(send, i)
            return results

        results = s.portal.call(three_at_once)
    answers = [_answer(r) for r in results]
    outcomes = sorted(a.get("status") or a["error"]["code"] for a in answers)
    assert outcomes == ["confirmation_used", "confirmation_used", "succeeded"], answers
    refused = [a["error"] for a in answers if "error" in a]
    assert all("nothing ran" in e["message"] and "asked once more" in e["hint"] for e in refused), refused
    assert len(run_folders(registry)) == 1
    codes = [line.get("code") for line in audit_lines(registry) if line.get("name") == "execute"]
    assert sorted(c for c in codes if c) == ["confirmation_used", "confirmation_used"]


def test_a_spent_confirmation_sent_again_later_runs_nothing_more(registry):
    with McpSession.stdio(registry, answer=decline()) as s:
        args = {"invocation_id": _validated(s)["invocation_id"]}
        asked = s.portal.call(lambda: s.client.session.call_tool("execute", args, allow_input_required=True))
        declined = {key: decline() for key in asked.input_requests}
        accepted = {key: accept() for key in asked.input_requests}

        def answer_with(responses):
            return _answer(s.portal.call(lambda: s.client.session.call_tool(
                "execute", args, input_responses=responses, request_state=asked.request_state,
                allow_input_required=True)))

        first, second = answer_with(declined), answer_with(accepted)
    # the person declined; the same question's state cannot be answered again with an acceptance
    assert first["error"]["code"] == "declined"
    assert second["error"]["code"] == "confirmation_used"
    assert not run_folders(registry)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_run_box_answered_with_yes_on_true_text_or_1_is_not_a_tick_and_runs_nothing(registry, mode):
    with McpSession.stdio(registry, answer=decline(), mode=mode) as s:
        args = {"invocation_id": _validated(s)["invocation_id"]}
        for value in ("yes", "on", "true", 1):
            s.answer = ElicitResult(action="accept", content={"run": value, "approved_by": "Grace Hopper"})
            r = s.call("execute", args)
            out = s.result(r)
            assert r.is_error and out["error"]["code"] == "declined", (value, out)
            assert "not ticked" in out["error"]["message"] and "nothing ran" in out["error"]["message"], out
        assert len(s.elicitations) == 4
        # a real JSON true is a tick
        s.answer = accept("Grace Hopper")
        assert s.result(s.call("execute", args))["status"] == "succeeded"
    assert len(run_folders(registry)) == 1


def test_a_thousand_validations_of_one_config_at_once_all_pass_and_leave_one_draft(registry):
    with McpSession.stdio(registry, answer=None) as s:
        async def all_at_once():
            results: list = [None] * VALIDATIONS_AT_ONCE

            async def send(i: int) -> None:
                results[i] = await s.client.call_tool("validate_params", VALIDATE)

            with anyio.fail_after(600):
                async with anyio.create_task_group() as tg:
                    for i in range(VALIDATIONS_AT_ONCE):
                        tg.start_soon(send, i)
            return results

        answers = [_answer(r) for r in s.portal.call(all_at_once)]
    refused = [a for a in answers if not a.get("ok")]
    assert not refused, f"{len(refused)} of {VALIDATIONS_AT_ONCE} refused, e.g. {refused[0]}"
    assert len({a["invocation_id"] for a in answers}) == 1
    drafts = sorted(p.name for p in (registry / "drafts").iterdir())
    assert drafts == [answers[0]["draft"].rsplit("/", 1)[-1]]  # no temporary file left behind
    assert (registry / answers[0]["draft"]).stat().st_mode & 0o777 == 0o600
