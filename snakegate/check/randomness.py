"""Pure scan of a Python rule script for random numbers drawn without a fixed seed.

The registry promises that the same invocation gives byte-identical outputs. A script that draws from
NumPy's global generator (`np.random.normal(...)`), from Python's `random` module, or from a generator
made without a seed (`np.random.default_rng()`, `RandomState()`), and that nowhere seeds one
(`np.random.seed(s)`, `random.seed(s)`, `default_rng(s)`, `RandomState(s)`, `pl.set_random_seed(s)`,
`torch.manual_seed(s)`, `tf.random.set_seed(s)`), gives other outputs on every run. This is what the
check can see from the text; a seed set in an imported module, or randomness inside a library called
with its own default (`random_state=None`), is beyond it. AST in, plain data out.
"""

from __future__ import annotations

import ast

_NUMPY = frozenset({"np", "numpy"})
# numpy.random attributes that neither draw nor seed the global generator
_NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "Generator", "SeedSequence", "get_state",
                        "set_state", "PCG64", "MT19937", "Philox", "SFC64", "BitGenerator", "bit_generator"})
_STDLIB_NOT_DRAWS = frozenset({"seed", "Random", "SystemRandom", "getstate", "setstate"})
_SEEDERS = frozenset({"set_random_seed", "manual_seed", "set_seed"})
_GENERATORS = frozenset({"default_rng", "RandomState", "Generator"})


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def unseeded_draws(tree: ast.AST) -> list[tuple[str, int]]:
    """(call as written, line) of every draw in a script that seeds nothing; [] when it seeds (pure)."""
    draws: list[tuple[str, int]] = []
    seeded = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if not name:
            continue
        has_args = bool(node.args or node.keywords)
        last = name[-1]
        if last in _GENERATORS and (len(name) == 1 or name[-2] == "random"):
            if has_args:
                seeded = True
            else:
                draws.append((ast.unparse(node), node.lineno))
        elif last == "seed" and len(name) >= 2 and name[-2] == "random" and has_args:
            seeded = True
        elif last in _SEEDERS and has_args:
            seeded = True
        elif len(name) == 3 and name[0] in _NUMPY and name[1] == "random" and last not in _NOT_DRAWS:
            draws.append((ast.unparse(node.func), node.lineno))
        elif len(name) == 2 and name[0] == "random" and last not in _STDLIB_NOT_DRAWS:
            draws.append((ast.unparse(node.func), node.lineno))
    return [] if seeded else sorted(draws, key=lambda d: d[1])
