"""A request that names nothing ("analyse my data"): answered with a question naming the choices, not a guess.

A small model handed "analyse my data" picks a workflow and a demo file and drafts it; the researcher
then approves an analysis nobody asked for. `is_vague()` says when a request for an analysis names nothing
to go on: every word of it is a generic one (asking, helping, "my data", "some files"), one of them asks
for an analysis or names data, and it names no file, no workflow, no number and no run ("hi" and
"thanks" are talk, not vague requests). Anything more specific ("profile my table", "what did my last run
say?") is not vague and goes to the model. `question()` is the answer: the workflows there are (id and
title), and what to tell. Pure: text and the registry's ids and titles in, text out.
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
