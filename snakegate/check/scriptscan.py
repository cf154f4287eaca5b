"""What a Python rule script (or a Snakefile's own code) does behind its rule's back, read from its AST (pure).

- `fetches`: downloads done by libraries — `requests.get(...)`, `httpx.post(...)`, `urllib.request.urlopen`,
  `urlretrieve`, `pooch.retrieve`, `wget.download`, `ftplib.FTP(...)`, and any reader (`pd.read_csv`,
  `open`, `np.loadtxt`, ...) given a URL literal or an f-string that starts with one.
- `cwd`: `Path.cwd()` / `os.getcwd()`: paths taken from the working folder, which is the registry root on
  the registry path (a hidden input, whatever the params say).
- `built_paths`: a reader given an f-string that starts with a literal folder (`open(f"data/{name}.csv")`):
  a file found relative to the working folder. One that starts with a value (`f"{snakemake.input[0]}/x"`,
  `f"{outdir}/x"`) is built from something the rule handed over and is not reported.
- `params_read`: the names read as `snakemake.params.X`, `snakemake.params["X"]`, `snakemake.params.get("X")`.
- `docstrings`: (text, line) of every docstring, which cite URLs rather than fetch them.

Nothing is read from disk and nothing is run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_HTTP_MODULES = frozenset({"requests", "httpx", "urllib3"})
_HTTP_VERBS = frozenset({"get", "post", "put", "head", "request", "stream", "patch", "urlopen"})
_FETCHERS = frozenset({"urlopen", "urlretrieve", "FTP", "FTP_TLS"})
_FETCH_MODULES = {"pooch": {"retrieve", "create"}, "wget": {"download"}, "gdown": {"download"}}
_READER = re.compile(r"^(open|read_\w+|load\w*|loadtxt|genfromtxt|fromfile|imread|Path|VariantFile|AlignmentFile|"
                     r"FastaFile|parse)$")
_URL = re.compile(r"^(?:https?|ftp|sftp|s3|gs)://", re.I)


@dataclass
class ScriptFacts:
    fetches: list[tuple[str, int]] = field(default_factory=list)  # (the call as written, line)
    cwd: list[tuple[str, int]] = field(default_factory=list)
    built_paths: list[tuple[str, int]] = field(default_factory=list)  # (the f-string as written, line)
    params_read: list[tuple[str, int]] = field(default_factory=list)
    docstrings: set[tuple[str, int]] = field(default_factory=set)


def _name(func) -> tuple[str | None, str | None]:
    """(module or object name, function name) of a call's target: requests.get -> ("requests", "get")."""
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Attribute):  # urllib.request.urlopen
            return owner.attr, func.attr
        return (owner.id if isinstance(owner, ast.Name) else None), func.attr
    return None, None


def _written(node) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - only shown in a message
        return "?"
    return text if len(text) <= 80 else text[:77] + "..."


def _head(node) -> str | None:
    """The literal text a string argument starts with ("https://x/{}" for f"https://x/{y}"), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def _is_snakemake_params(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "params" and isinstance(node.value, ast.Name)
            and node.value.id == "snakemake")


def scan_script(tree: ast.AST) -> ScriptFacts:
    out = ScriptFacts()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.docstrings.add((first.value.value, first.value.lineno))
        if isinstance(node, ast.Call):
            _call(node, out)
        elif isinstance(node, ast.Attribute) and _is_snakemake_params(node.value) and node.attr not in ("get", "keys",
                                                                                                           "items"):
            out.params_read.append((node.attr, node.lineno))
        elif (isinstance(node, ast.Subscript) and _is_snakemake_params(node.value)
              and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            out.params_read.append((node.slice.value, node.lineno))
    return out


def _call(node: ast.Call, out: ScriptFacts) -> None:
    owner, name = _name(node.func)
    first = node.args[0] if node.args else None
    head = _head(first) if first is not None else None
    if ((owner in _HTTP_MODULES and name in _HTTP_VERBS) or name in _FETCHERS
            or name in _FETCH_MODULES.get(owner or "", ()) or (name and _READER.match(name) and head
                                                                and _URL.match(head))):
        out.fetches.append((_written(node), node.lineno))
        return
    if name in ("cwd", "getcwd", "getcwdb") and owner in ("Path", "pathlib", "os", "PurePath"):
        out.cwd.append((_written(node), node.lineno))
    elif (name and _READER.match(name) and isinstance(first, ast.JoinedStr) and head
          and ("/" in head or head.startswith(".")) and not _URL.match(head)):
        out.built_paths.append((_written(first), node.lineno))
    elif name == "get" and _is_snakemake_params(node.func.value if isinstance(node.func, ast.Attribute) else None) \
            and isinstance(first, ast.Constant) and isinstance(first.value, str):
        out.params_read.append((first.value, node.lineno))
