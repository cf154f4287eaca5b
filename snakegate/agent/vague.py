"""A request that names nothing ("analyse my data"): answered with a question naming the choices, not a guess.

A small model handed "analyse my data" picks a workflow and a demo file and drafts it; the researcher
then approves an analysis nobody asked for. `is_vague()` says when a request for an analysis names nothing
to go on: every word of it is a generic one (asking, helping, "my data", "some files"), one of them asks
for an analysis or names data, and it names no file, no workflow, no number and no run ("hi" and
"thanks" are talk, not vague requests). Anything more specific ("profile my table", "what did my last run
say?") is not vague and goes to the model. `question()` is the answer: the workflows there are (id and
title), and what to tell. A request that hints an analysis but names no data (`names_no_data`: no file, no
number, no run) is asked about too (asking.py chooses): `which_workflow()` names the workflows that fit,
`which_file()` the data files that fit the one that clearly does; `asked_back()` knows these questions, so the
answer to one goes to the model. Pure: text and the registry's ids and titles in, text out.
"""

from __future__ import annotations

import re

MAX_NAMED = 12  # a bigger registry: the first ones, and a word on searching
ASKED = "Which analysis would you like, and on which data file?"

GENERIC = frozenset("""
a an the my our your i'd i'm i've let's what's it's this that these those some any all it its them me i we you us please pls kindly thanks thank
can could would will should may might shall do does did done doing want wanted wish need like love try go
help helping assist hello hi hey there here what which how where anything something everything stuff thing things
with on in of for to from at by about and or but just now then so also too lot lots bit little
analyse analyze analysing analyzing analysis analyses process processing crunch look run running start
make work working handle deal check see tell give get show use using have has had got be is are am was were
data dataset datasets file files measurement measurements number numbers values sample samples experiment
experiments collected recorded new own
""".split())

# words that make a generic message a request for an analysis ("analyse my data", "help me with my files")
INTENT = frozenset("""
analyse analyze analysing analyzing analysis analyses process processing crunch data dataset datasets file files
measurement measurements sample samples experiment experiments
""".split())

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_SPECIFIC = re.compile(r"[/\\`=]|\w\.\w|\d")   # a path, a file name, a name=value, a number


def is_vague(text: str, workflow_ids: list[str] = ()) -> bool:
    """`text` is made only of generic words: no file, no number, no workflow id, no word that could name an
    analysis, a column or a param."""
    words = [w.lower() for w in _WORD.findall(text)]
    if not words or _SPECIFIC.search(text) or any(i in text for i in workflow_ids):
        return False
    # "hi", "thanks", "run it" are talk, not a request to pick an analysis for
    return all(w in GENERIC for w in words) and any(w in INTENT for w in words)


def question(choices: list[tuple[str, str]]) -> str:
    """Which workflow, and which data: the `choices` ((id, title)) named."""
    named = "; ".join(f"{wf_id} ({title})" for wf_id, title in choices[:MAX_NAMED])
    more = (f"; and {len(choices) - MAX_NAMED} more (describe the analysis and I will search)"
            if len(choices) > MAX_NAMED else "")
    return (f"{ASKED} The workflows I can fill in: "
            f"{named}{more}. Tell me one of them (or what you want to learn from the data) and the file; "
            "I will not guess.")


# ---- a hinted analysis with nothing to run it on --------------------------------------------------------------
# "How well could a classifier tell my groups apart?" hints a workflow but names no data: a model drafts it on a
# demo file or a default (a guessed draft). The controller asks instead, naming the workflows that fit and, when
# one clearly fits, the data files that fit its file params. Talk about runs, drafts and approval is not a request
# for a new analysis: it goes to the model.
MAX_FILES = 8      # files named in a question; more are one inspect_data away
_ABOUT_RUNS = re.compile(r"\b(?:runs?|ran|results?|fail(?:ed|s|ure)?|approve[ds]?|draft|restart|plan|step|fork|"
                         r"compare|recover|explain|why|workflows?|describe|search|list|"
                         r"until|instead|again|wrong|change|contaminated|then|twice|too|also|every|each|"
                         r"combinations?|"
                         r"what\s+(?:does|do|is|are))\b", re.I)
# (the last lines: refining or recovering an earlier run, "try other ROIs until it is clean"; a chain, "clean
# then classify", "and a random forest too"; a sweep, "try every combination"; asking what a workflow does)


def content_words(text: str) -> list[str]:
    """The words of `text` that could name an analysis: not generic (GENERIC), three letters or more."""
    return [w for w in (w.lower() for w in _WORD.findall(text)) if w not in GENERIC and len(w) >= 3]


def names_no_data(text: str) -> bool:
    """`text` asks about an analysis but names nothing to run it on: no path or file name, no number, no
    name=value, no run, draft, plan, chain or workflow (those are questions to the model); and it has at least
    two words that could name an analysis ("clean it" points back at something, a greeting is no request)."""
    return len(content_words(text)) >= 2 and not _SPECIFIC.search(text) and not _ABOUT_RUNS.search(text)


def asked_back(said: str) -> bool:
    """`said` is one of this module's questions: the researcher's next message answers it and goes to the model."""
    return said.startswith((ASKED, _SEVERAL)) or _ONE_FITS in said


_SEVERAL = "Several workflows fit what you describe"
_ONE_FITS = " fits what you describe. Which data file"


def which_workflow(fitting: list[tuple[str, str]]) -> str:
    """Several workflows fit a request that named no data: which one, and which file (`fitting`: (id, title))."""
    named = "; ".join(f"{wf_id} ({title})" for wf_id, title in fitting[:MAX_NAMED])
    return (f"{_SEVERAL}: {named}. Which one do you mean, and on which data file? "
            "I will not guess.")


def which_file(wf_id: str, title: str, files: dict[str, list[str]]) -> str:
    """One workflow fits a request that named no data: which file for each of its file params (`files`: {param:
    the data files that fit it}), the files named."""
    asks = []
    for param, fitting in files.items():
        shown = ", ".join(fitting[:MAX_FILES]) + (f" and {len(fitting) - MAX_FILES} more" if len(fitting) > MAX_FILES
                                                  else "")
        asks.append(f"{param} (the files that fit: {shown})" if fitting else f"{param} (no data file fits yet)")
    return (f"{wf_id} ({title}){_ONE_FITS} should it read for "
            + "; and for ".join(asks) + "? Tell me the file (or another path under the data roots); I will not guess.")
