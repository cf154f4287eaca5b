"""Which question to send back instead of asking the model, for a turn that starts from nothing.

`question_back()` answers a first request that gives the model nothing to draft from: one that names nothing
at all ("analyse my data": the workflows there are, vague.question), and one that hints an analysis but names
no data to run it on ("How well could a classifier tell my groups apart?"). For the latter it asks which of the
workflows the registry's search ranks for the words (vague.which_workflow), or, when the search picks one
clearly (prompt.clear_choice), which of the data files that fit its file params (vague.which_file). A small
model handed such a request drafts on a demo file or a default: a guessed draft the researcher never asked for.
`fitting()` is that ranking (the clear choice alone, else those close to the best), which is also all a
constrained step may pick a workflow from (the controller's tools).

It reads the list of files in the data roots (no file's content), and never sends, drafts or runs anything;
a request that states anything the request reading (prefill.py) takes, names a data file by a word of its
name ("my penguin table"), talks about runs or the registry, or hints a workflow that runs on no data file,
goes to the model.
"""

from __future__ import annotations

import json
import re

from snakegate.agent import vague
from snakegate.agent.actions.data import data_files
from snakegate.agent.actions.registry import param_table
from snakegate.agent.prefill import candidates, prefilled
from snakegate.agent.prompt import clear_choice, ranked_ids

MAX_FITTING = 5   # workflows named when several fit
_PART = re.compile(r"[^\W\d_]{3,}")   # a word of a file's name or of the request worth comparing


def _names_a_file(text: str, files: list[str], registry) -> bool:
    """A word of `text` is a word of a data file's name ("penguin" of tabular-penguins.csv) that no workflow's
    own description or contract uses ("frames" of frames.npz describes pump-probe's input, not one file)."""
    spoken = {w.lower() for w in _PART.findall(text)}
    vocabulary = {w.lower() for wf in registry.workflows.values() for w in _PART.findall(" ".join(
        [wf.manifest.id, wf.manifest.title, " ".join(wf.manifest.tags), wf.manifest.description,
         json.dumps(wf.schema)]))}  # the contract's descriptions name the kinds of input ("detector frames")
    named = {w.lower() for f in files for w in _PART.findall(f.rsplit("/", 1)[-1].split(".")[0])} - vocabulary
    return any(n.startswith(w) or w.startswith(n) for w in spoken for n in named)


def fitting(registry, text: str) -> list:
    """The workflows the registry's search ranks for the words of `text` that could name an analysis: the clear
    choice alone, else those within half the best score; [] when nothing fits."""
    words = vague.content_words(text)
    ranked = registry.search(" ".join(words), MAX_FITTING) if words else []
    top = ranked[0][1] if ranked else 0
    clear = clear_choice(registry, " ".join(words)) if words else None
    if clear is not None:
        return [registry.get(clear)]
    # within half the best score: the rest share a word or two with the request
    return [wf for wf, score in ranked if score > 0 and score >= top / 2]


def question_back(registry, settings, text: str) -> str | None:
    """The question for `text`, the first request of a turn with nothing being filled, or None (the model goes on)."""
    if vague.is_vague(text, registry.ids()):
        return vague.question([(i, registry.get(i).manifest.title) for i in ranked_ids(registry, None)])
    if not vague.names_no_data(text):
        return None
    words = vague.content_words(text)
    hits = fitting(registry, text)
    if not hits or not _says_a_word_of(words, hits[0]) or not _needs_data(hits[0]):
        return None  # nothing fits by a whole word, or the best fit runs on its defaults: the model drafts
    files = [e["path"] for e in data_files(settings)]
    if _names_a_file(text, files, registry):  # "my penguin table": the model finds it with inspect_data
        return None
    if prefilled(text, param_table(hits[0].schema), {}, files):  # a value the workflow takes: the model fills
        return None
    if len(hits) > 1:
        return vague.which_workflow([(wf.id, wf.manifest.title) for wf in hits if _needs_data(wf)])
    wf = hits[0]
    fits = candidates(param_table(wf.schema), files)
    return vague.which_file(wf.id, wf.manifest.title, {name: fits.get(name, []) for name in _needs_data(wf)})


def _data_params(wf) -> list[str]:
    props = wf.schema.get("properties") or {}
    return [n for n, p in props.items() if isinstance(p, dict) and p.get("x-artifact") and not p.get("x-sensitive")]


def _needs_data(wf) -> list[str]:
    """The file params that hold the data `wf` analyses: the required ones, else all (a default there is a demo
    file or a built-in data set, which is a guess too)."""
    required = set(wf.schema.get("required") or [])
    files = _data_params(wf)
    return [n for n in files if n in required] or files


def _says_a_word_of(words: list[str], wf) -> bool:
    """A word of the request is a whole word of the workflow's id, title, tags or description (a plural too)."""
    m = wf.manifest
    own = set(_PART.findall(" ".join([m.id, m.title, " ".join(m.tags), m.description]).lower()))
    own |= {w[:-1] for w in own if w.endswith("s")}
    return any(w in own or w.rstrip("s") in own for w in words)
