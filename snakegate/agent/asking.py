"""Which question to send back instead of asking the model, for a turn that starts from nothing.

`question_back()` answers a first request that gives the model nothing to draft from: one that names nothing
at all ("analyse my data": the workflows there are, vague.question), and one that hints an analysis but names
no data to run it on ("How well could a classifier tell my groups apart?"). For the latter it asks which of the
workflows the registry's search ranks for the words (vague.which_workflow), or, when the search picks one
clearly (prompt.clear_choice), which of the data files that fit its file params (vague.which_file). A small
model handed such a request drafts on a demo file or a default: a guessed draft the researcher never asked for.

It reads the list of files in the data roots (no file's content), and never sends, drafts or runs anything;
a request that states anything the request reading (prefill.py) takes, names a data file by a word of its
name ("my penguin table") or a workflow by its id, or talks about runs, goes to the model.
"""

from __future__ import annotations

import re

from snakegate.agent import vague
from snakegate.agent.actions.data import data_files
from snakegate.agent.actions.registry import param_table
from snakegate.agent.prefill import candidates, prefilled
from snakegate.agent.prompt import clear_choice, ranked_ids

MAX_FITTING = 5   # workflows named when several fit
_PART = re.compile(r"[^\W\d_]{4,}")   # a word of a file's name or of the request worth comparing


def _names_a_file(text: str, files: list[str], registry) -> bool:
    """A word of `text` is a word of a data file's name ("penguin" of tabular-penguins.csv) that no workflow's
    own description uses ("frames" of frames.npz describes pump-probe's input, not one file)."""
    spoken = {w.lower() for w in _PART.findall(text)}
    vocabulary = {w.lower() for wf in registry.workflows.values() for w in _PART.findall(
        " ".join([wf.manifest.id, wf.manifest.title, " ".join(wf.manifest.tags), wf.manifest.description]))}
    named = {w.lower() for f in files for w in _PART.findall(f.rsplit("/", 1)[-1].split(".")[0])} - vocabulary
    return any(n.startswith(w) or w.startswith(n) for w in spoken for n in named)


def question_back(registry, settings, text: str) -> str | None:
    """The question for `text`, the first request of a turn with nothing being filled, or None (the model goes on)."""
    if vague.is_vague(text, registry.ids()):
        return vague.question([(i, registry.get(i).manifest.title) for i in ranked_ids(registry, None)])
    if not vague.names_no_data(text) or any(i in text for i in registry.ids()):
        return None
    ranked = registry.search(text, MAX_FITTING)
    top = ranked[0][1] if ranked else 0
    # the workflows that fit: within half the best score (the rest share a word or two with the request)
    hits = [wf for wf, score in ranked if score > 0 and score >= top / 2]
    if not hits:
        return None
    files = [e["path"] for e in data_files(settings)]
    if _names_a_file(text, files, registry):  # "my penguin table": the model finds it with inspect_data
        return None
    params = param_table(hits[0].schema)
    if prefilled(text, params, {}, files):  # it states a value the workflow takes: the model fills the rest
        return None
    clear = clear_choice(registry, text)
    if clear is None:
        return vague.which_workflow([(wf.id, wf.manifest.title) for wf in hits])
    wf = registry.get(clear)
    params = param_table(wf.schema)
    required = set(wf.schema.get("required") or [])
    fitting = candidates(params, files)
    asked = {p["name"]: fitting.get(p["name"], []) for p in params
             if p.get("artifact") and not p.get("sensitive") and p["name"] in required}
    if not asked:  # nothing to run it on is required: the model can draft with the defaults
        return None
    return vague.which_file(wf.id, wf.manifest.title, asked)
