"""Issue 25: the guided dialogue's `show RUN` tells the person a run's verdict, not only its numbers: pump-probe's
contaminated background ROI reaches them with the failing checks, what they mean, the params to look at and the
workflow's own diagnosis (where to move the ROI).

The real Conversation, GuidedBackend and actions over a real pump-probe run (tests/verdict_view_runs.py).
"""

from __future__ import annotations

from snakegate.agent.controller import Conversation
from snakegate.agent.events import AssistantSaid
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def said(conversation: Conversation, text: str) -> str:
    return "\n".join(e.text for e in conversation.send(text) if isinstance(e, AssistantSaid))


def test_show_run_of_a_contaminated_run_says_the_verdict_what_failed_and_what_to_change(judged_registry,
                                                                                       contaminated_run):
    conversation = Conversation(Registry.load(judged_registry), load_settings(judged_registry), GuidedBackend())
    text = said(conversation, f"show {contaminated_run.name}")
    assert f"Run `{contaminated_run.name}` (pump-probe): **succeeded**" in text
    assert "Verdict: **fail** — 2 of 2 checks failed (background_uniform, background_mean_p)" in text
    uniform = next(line for line in text.splitlines() if line.startswith("- `background_uniform` failed"))
    assert "/background/ks_pvalue = " in uniform and "needs >= 0.001." in uniform
    assert "Move background_roi away from the signal" in uniform and uniform.endswith("Look at `background_roi`.")
    assert "Look at `background_roi`, `signal_roi`." in text
    diagnosis = next(line for line in text.splitlines() if line.startswith("Diagnostics `results/diagnostics.json`"))
    assert ": contaminated: the background ROI [16, 24, 8, 24] picks up pump-induced signal" in diagnosis
    assert "for example background_roi: [22, 30, 8, 24]" in diagnosis
