"""`snakegate draft`'s reading of rule IO: the arguments as written (`snakegate.check.ioexpr`) evaluated into
paths the way Snakemake would, as far as that can be known without running the workflow — pure.

Evaluated: literal paths, `expand()` over literal lists (a wildcard fed by a literal list is enumerated; one
fed by a `glob_wildcards()` of the working folder or by config stays a `{wildcard}` and is said to come from
there), `multiext()`, `rules.X.output` (whole, `.name` or `[i]`), top-level functions whose every return
is written out (lists, `expand()`, dict literals), and the names `unpack(f)` gives when f returns dict
literals. Whatever cannot be evaluated (a lambda, a function that computes its answer, a library call) is
returned as `unknown` with its source text, never guessed: the caller says so. Nothing is read or run.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from snakegate.check.ioexpr import fields
from snakegate.check.reading import WorkflowSource

MAX_PATHS = 64  # an expand() over more literal values than this stays a pattern
MAX_DEPTH = 8  # rules.a.output -> rules.b.output -> ...: a cycle is written out nowhere
MAX_STEPS = 5000  # def f(w): return [f, f, f]: a hostile Snakefile gets `unknown`, never an exponential walk


@dataclass
class Paths:
    """What one argument gives: paths (patterns keep their {wildcards}) and what could not be known."""

    paths: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # source text of what could not be evaluated
    globbed: dict[str, str] = field(default_factory=dict)  # wildcard -> glob pattern its values come from
    listed: dict[str, str] = field(default_factory=dict)  # wildcard -> literal list that enumerated it

    def add(self, other: "Paths") -> "Paths":
        self.paths += other.paths
        self.unknown += other.unknown
        self.globbed.update(other.globbed)
        self.listed.update(other.listed)
        return self


class Evaluator:
    def __init__(self, src: WorkflowSource):
        self.src = src
        self.names = src.names
        self.steps = 0

    def paths(self, desc: tuple, depth: int = 0) -> Paths:
        kind = desc[0]
        self.steps = 0 if depth == 0 else self.steps + 1  # a budget per argument evaluated
        if depth > MAX_DEPTH or self.steps > MAX_STEPS:
            return Paths(unknown=["references that go on and on (rules.X.output or functions naming each other)"])
        if kind == "literal":
            return Paths(paths=[desc[1]])
        if kind == "list" or kind == "unpack":
            out = Paths()
            for sub in (desc[1] if kind == "list" else (desc[1],)):
                out.add(self.paths(sub, depth + 1))
            return out
        if kind == "multiext":
            return Paths(paths=[desc[1] + ext for ext in desc[2]])
        if kind == "expand":
            return self._expand(desc[1], dict(desc[2]), depth)
        if kind == "ref":
            return self._ref(desc[1], desc[2], desc[3], depth)
        if kind == "name":
            return self._name(desc[1], depth)
        return Paths(unknown=[desc[1]])

    def _name(self, name: str, depth: int) -> Paths:
        if name in self.names.lists:
            return Paths(paths=list(self.names.lists[name]))
        function = self.names.functions.get(name)
        if function is None or not function[1]:
            return Paths(unknown=[f"{name} (a function or name whose value draft cannot read)"])
        out = Paths()
        for value in function[0]:
            if value[0] == "dict":
                for _key, sub in value[1]:
                    out.add(self.paths(sub, depth + 1))
            else:
                out.add(self.paths(value, depth + 1))
        return out

    def _ref(self, rule_name: str, kind: str, selector, depth: int) -> Paths:
        rule = self.src.rule(rule_name)
        if rule is None:
            return Paths(unknown=[f"rules.{rule_name}.{kind} (no rule `{rule_name}` was read)"])
        sources = rule.sources[kind]
        if selector is None:
            chosen = list(sources.values())
        elif isinstance(selector, int):
            chosen = list(sources.values())[selector:selector + 1]
        else:
            chosen = [sources[selector]] if selector in sources else []
        if not chosen:
            return Paths(unknown=[f"rules.{rule_name}.{kind}[{selector!r}] (the rule has no such {kind})"])
        out = Paths()
        for sub in chosen:
            out.add(self.paths(sub, depth + 1))
        return out

    def _expand(self, pattern: str, keywords: dict, depth: int) -> Paths:
        out = Paths()
        values: dict[str, list[str]] = {}
        for wildcard in fields(pattern):
            given = keywords.get(wildcard)
            if given is None:
                continue  # left for Snakemake's own wildcards
            if given[0] == "name" and given[1] in self.names.globbed:
                out.globbed[wildcard] = self.names.globbed[given[1]]
            elif given[0] == "name" and given[1] in self.names.lists:
                values[wildcard] = list(self.names.lists[given[1]])
                out.listed[wildcard] = given[1]
            elif given[0] == "literal":
                values[wildcard] = [given[1]]
            elif given[0] == "list" and all(g[0] == "literal" for g in given[1]):
                values[wildcard] = [g[1] for g in given[1]]
                out.listed[wildcard] = "a literal list"
            # anything else (config, a function) keeps the {wildcard}: a param is asked for by the caller
        if math.prod(len(v) for v in values.values()) > MAX_PATHS:  # counted, never built
            out.listed.clear()
            out.paths.append(pattern)
            return out
        combos = list(itertools.product(*values.values())) if values else [()]
        for combo in combos:
            path = pattern
            for wildcard, value in zip(values, combo):
                path = path.replace("{" + wildcard + "}", value)
            out.paths.append(path)
        return out

    def unpack_names(self, desc: tuple) -> dict[str, Paths] | None:
        """The names `unpack(desc)` gives, each with its paths, when desc returns dict literals; else None."""
        if desc[0] == "function" and len(desc) > 2:  # unpack(lambda w: {...} if ... else {...})
            returns = desc[2]
        elif desc[0] == "name" and desc[1] in self.names.functions and self.names.functions[desc[1]][1]:
            returns = self.names.functions[desc[1]][0]
        else:
            return None
        if not returns or not all(r[0] == "dict" for r in returns):
            return None
        out: dict[str, Paths] = {}
        for value in returns:
            for key, sub in value[1]:
                out.setdefault(key, Paths()).add(self.paths(sub))
        return out
