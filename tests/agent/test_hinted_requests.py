"""A request that hints an analysis but names no data gets a question naming the choices, with any model (issue 26).

Real Conversation over the real OpenAIBackend and the scripted OpenAI-compatible server, whose one scripted
reply is a guessed draft on the demo table: the controller, not the model, must notice the request names
nothing to run on and ask which workflow or which file, naming them.
"""

from __future__ import annotations

from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from registry_copies import copy_table_files, make_registry
from snakegate.agent.asking import question_back
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import AssistantSaid, DraftReady
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

PENGUINS = "data/examples/tabular-penguins.csv"
GUESS = [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}})]
OVERVIEW = "I'd like a quick overview of a table I have, missing values and duplicates and that kind of thing."


def test_a_hinted_analysis_without_data_gets_the_fitting_files_named_and_no_guessed_draft(conversation):
    convo, server = conversation([GUESS, "The draft is ready."])
    events = convo.send(OVERVIEW)
    (said,) = events
    assert isinstance(said, AssistantSaid)
    assert said.text.startswith("tabular-profile (Tabular profile) fits what you describe. Which data file")
    assert PENGUINS in said.text and "dataset_file" in said.text and "?" in said.text
    assert server.requests == [] and convo.draft is None    # the model was not asked, so it could not guess


def test_the_answer_naming_the_file_goes_to_the_model_with_the_question_before_it(conversation):
    convo, server = conversation([GUESS, "The draft is ready."])
    convo.send(OVERVIEW)
    events = convo.send(f"use {PENGUINS}")
    assert any(isinstance(e, DraftReady) for e in events)
    said = [m["content"][:15] for m in server.requests[0]["messages"][1:]]
    assert said == [OVERVIEW[:15], "tabular-profile", f"use {PENGUINS}"[:15]]


def test_a_vague_answer_to_the_question_goes_to_the_model_rather_than_the_same_question_again(conversation):
    convo, server = conversation(["Which of the files do you mean?"])
    convo.send(OVERVIEW)
    convo.send("a table about missing values")
    assert len(server.requests) == 1


def test_when_several_workflows_fit_the_question_names_each_of_them(tmp_path):
    cleaner = copy_table_files("row-cleaner", "Row cleaner", "Cleans a table of missing values and duplicate rows.")
    root = make_registry(tmp_path / "registry", {"row-cleaner": cleaner})
    server = ScriptedOpenAI([GUESS])
    server.start()
    try:
        backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="k", timeout=10)
        convo = Conversation(Registry.load(root), load_settings(root), backend, conversation_id="c-t")
        (said,) = convo.send(OVERVIEW)
        assert said.text.startswith("Several workflows fit what you describe:")
        assert "tabular-profile (Tabular profile)" in said.text and "row-cleaner (Row cleaner)" in said.text
        assert said.text.count("?") == 1 and server.requests == [] and convo.draft is None
    finally:
        server.stop()


def test_requests_that_name_data_a_workflow_a_number_or_a_run_go_to_the_model(agent_registry):
    registry, settings = Registry.load(agent_registry), load_settings(agent_registry)
    for text in ["profile my penguin table", f"profile {PENGUINS}", "run tabular-profile", "profile it with 20 bins",
                 "why did my last run fail?", "missing values: fill_median please", "hello", "thanks!", "hi",
                 "describe tabular-profile", "which workflow?", "write a secret note",
                 "what does tabular-profile do?", "the table is wrong: try other columns until it is clean",
                 "What went wrong, and what should I change?"]:
        assert question_back(registry, settings, text) is None, text
