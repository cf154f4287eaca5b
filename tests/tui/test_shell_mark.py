"""The draft panel marks a value that a community workflow pastes into a shell command unquoted, when the
value holds characters the shell would interpret; a plain value, or a quoted param, is shown as it is."""

from __future__ import annotations

import asyncio
import json

from textual.app import App

from chat_pilot import SIZE, text_of
from registry_copies import make_registry, one_rule_workflow
from snakegate.agent.events import Draft
from snakegate.tui import present
from snakegate.tui.draft_panel import DraftPanel


class PanelApp(App):
    def compose(self):
        yield DraftPanel()


def shown_params(tmp_path, shell: str, label: str) -> str:
    files = one_rule_workflow("label-note", "Label note", "Writes a note from a free-text label.", shell)
    root = make_registry(tmp_path / "reg", {"label-note": files})
    schema = json.loads((root / "workflows" / "label-note" / "schema.json").read_text())
    draft = Draft(workflow="label-note", version="0.1.0", invocation_id="a" * 64, params={"label": label},
                  config_path=root / "drafts" / "d.yaml", config_text="")
    app = PanelApp()
    shown = []

    async def scenario():
        async with app.run_test(size=SIZE) as pilot:
            app.query_one(DraftPanel).show_draft(draft, schema, root)
            await pilot.pause()
            shown.append(text_of(app.query_one("#draft-params")))

    asyncio.run(scenario())
    return shown[0]


def test_a_label_that_would_run_a_command_is_marked_in_the_draft_panel(tmp_path):
    shown = shown_params(tmp_path, "echo {params.label} > {output.note}", "hello; touch pwned")
    assert "hello; touch pwned" in shown and "reaches a shell command unquoted" in shown


def test_a_plain_label_or_a_quoted_param_is_not_marked(tmp_path):
    assert "unquoted" not in shown_params(tmp_path / "plain", "echo {params.label} > {output.note}", "hello")
    assert "unquoted" not in shown_params(tmp_path / "quoted", "echo {params.label:q} > {output.note}",
                                          "hello; touch pwned")


def test_param_lines_mark_only_exposed_params_whose_value_a_shell_would_interpret():
    schema = {"properties": {"label": {"type": "string"}, "title": {"type": "string"}}}
    lines = dict(present.param_lines(schema, {"label": "a|b", "title": "a|b"}, frozenset({"label"})))
    assert lines == {"label": f"a|b  {present.SHELL_MARK}", "title": "a|b"}
