"""Bounded refinement: a person approves once a space of param values around an earlier run, a budget and a
stop rule; every run in it is a gated fork of its predecessor, recorded with a link to that one approval.

`space` builds and gates the whole proposal before anything runs; `approval` keeps the approved proposal
outside the run folders; `loop` runs it and stops at the rule, the budget or a cancel; `text` words the
proposal and the outcome the same for every door. Nothing here
decides what may run beyond the approved points, and nothing here talks to a person: the command line,
the chat and MCP show the proposal and ask.
"""
