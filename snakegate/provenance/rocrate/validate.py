"""Run roc-validator on a crate: a separate command in its own environment, offline.

Every roc-validator release pins `rich<14` while Textual (snakegate's chat)
needs `rich>=14.2`, so the two can never share one Python environment.
snakegate therefore never imports roc-validator: it runs its command-line tool
(`rocrate-validator`) as a subprocess, found through `SNAKEGATE_ROC_VALIDATOR`
(the path of the tool, e.g. `.ci/.rocval/bin/rocrate-validator`) or on PATH.
`PROVISION` is the command that makes such an environment.

Validation needs the RO-Crate JSON-LD contexts, which roc-validator fetches
over HTTP through a requests-cache database. We fill that database from the
1.3 context bundled with the `rocrate` package (the 1.1 context is derived from
it) using the validator's own Python and requests-cache, then run the tool
with `--offline --cache-path`, so no request ever leaves the machine.

Nothing here writes outside a temporary folder; the crate is only read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "SNAKEGATE_ROC_VALIDATOR"
PROVISION = ("python3 -m venv .ci/.rocval && .ci/.rocval/bin/pip install roc-validator && "
             f"export {ENV_VAR}=$PWD/.ci/.rocval/bin/rocrate-validator")
DEFAULT_PROFILE = "provenance-run-crate-0.5"
TIMEOUT_S = 300

# RO-Crate 1.1 maps the Bioschemas terms to these IRIs; the 1.3 context bundled with rocrate uses
# https://bioschemas.org/terms/... for the same four terms and is otherwise a superset.
_BIOSCHEMAS_1_1 = {"ComputationalWorkflow": "https://bioschemas.org/ComputationalWorkflow",
                   "FormalParameter": "https://bioschemas.org/FormalParameter",
                   "input": "https://bioschemas.org/ComputationalWorkflow#input",
                   "output": "https://bioschemas.org/ComputationalWorkflow#output"}

# Runs with the validator's Python: store the given documents in a requests-cache database as
# roc-validator's HTTP session would have fetched them (same library, same version, same keys).
_WARM = r"""
import io, json, sys
import urllib3
from requests.adapters import HTTPAdapter
from requests_cache import CachedSession
cache_name, documents_file = sys.argv[1], sys.argv[2]
with open(documents_file, encoding="utf-8") as fh:
    documents = {url: text.encode("utf-8") for url, text in json.load(fh).items()}
class Bundled(HTTPAdapter):
    def send(self, request, **kwargs):
        raw = urllib3.HTTPResponse(body=io.BytesIO(documents[request.url]), status=200, preload_content=False,
                                   headers={"Content-Type": "application/ld+json"}, request_url=request.url)
        return self.build_response(request, raw)
session = CachedSession(cache_name=cache_name, backend="sqlite", expire_after=-1, allowable_methods=("GET",),
                        allowable_codes=(200, 302, 404))
session.mount("https://", Bundled())
for url in documents:
    session.get(url, headers={"Accept": "application/ld+json, application/json, */*;q=0.1"})
session.close()
"""


# Runs with the validator's Python: the cache as _WARM fills it, then the `rocrate-validator` command itself
# (its click entry point, the one its console script calls) once per crate, each writing its own report.
# A crate the command cannot judge leaves no report; the caller names it.
_BATCH = _WARM + r"""
from rocrate_validator.cli import cli as command
for args in json.loads(sys.argv[3]):
    try:
        command.main(args, prog_name="rocrate-validator", standalone_mode=False)
    except SystemExit:
        pass
    except Exception as exc:  # the command's own words (a click error has them), not a traceback
        print(getattr(exc, "format_message", lambda: str(exc))(), file=sys.stderr)
"""


class ValidatorMissing(Exception):
    """No roc-validator command was found; the message says how to provision one."""


class ValidatorFailed(Exception):
    """The validator could not judge the crate (it crashed or wrote no report)."""


@dataclass(frozen=True)
class Issue:
    check: str
    severity: str
    message: str
    entity: str | None

    def __str__(self) -> str:
        where = f" ({self.entity})" if self.entity else ""
        return f"{self.check}: {self.message}{where}"


def find() -> Path | None:
    """The roc-validator command: $SNAKEGATE_ROC_VALIDATOR, else `rocrate-validator` on PATH."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        path = Path(chosen).expanduser()
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("rocrate-validator")
    return Path(found) if found else None


def require() -> Path:
    cli = find()
    if cli is None:
        chosen = os.environ.get(ENV_VAR)
        where = f"{ENV_VAR}={chosen} is not an executable file" if chosen else \
            f"no `rocrate-validator` on PATH and {ENV_VAR} is not set"
        raise ValidatorMissing(f"roc-validator is not available ({where}); it needs its own environment "
                               f"(its rich pin conflicts with Textual's): {PROVISION}")
    return cli


def _python_of(cli: Path) -> str:
    """The interpreter that runs the validator: its script's `#!` line, else the python next to it."""
    try:
        with open(cli, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        first = ""
    if first.startswith("#!") and "python" in Path(first[2:].split()[0]).name:
        return first[2:].split()[0]
    for name in ("python3", "python"):
        candidate = cli.parent / name
        if candidate.exists():
            return str(candidate)
    raise ValidatorFailed(f"cannot tell which Python runs {cli} (no python #! line and no python next to it)")


def _contexts() -> dict[str, str]:
    import rocrate

    bundled = json.loads((Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld").read_text(encoding="utf-8"))
    v11 = json.loads(json.dumps(bundled))
    v11["@id"] = "https://w3id.org/ro/crate/1.1/context"
    v11["@context"].update(_BIOSCHEMAS_1_1)
    return {"https://w3id.org/ro/crate/1.3/context": json.dumps(bundled),
            "https://w3id.org/ro/crate/1.1/context": json.dumps(v11)}


def validate(crate: Path, profile: str = DEFAULT_PROFILE, severity: str = "required") -> list[Issue]:
    """The issues roc-validator finds at `severity` (required | recommended | optional) and above; [] passes.

    Raises ValidatorMissing without a validator and ValidatorFailed when it cannot judge the crate."""
    return validate_many([crate], profile, severity)[0]


def validate_many(crates: list[Path], profile: str = DEFAULT_PROFILE, severity: str = "required") -> list[list[Issue]]:
    """`validate` for several crates, in order: one validator process judges them all (its start-up and the
    offline cache are paid once, not once per crate; the judgement of each is the command's own)."""
    cli = require()
    if not crates:
        return []
    with tempfile.TemporaryDirectory(prefix="snakegate-rocval-") as tmp:
        folders = [_judged_folder(Path(crate), Path(tmp) / f"crate-{i}") for i, crate in enumerate(crates)]
        documents = Path(tmp) / "contexts.json"
        documents.write_text(json.dumps(_contexts()), encoding="utf-8")
        cache = str(Path(tmp) / "http_cache")
        reports = [Path(tmp) / f"report-{i}.json" for i in range(len(folders))]
        args = [[*_command_args(cache, profile, severity, report), str(folder)]
                for folder, report in zip(folders, reports)]
        proc = subprocess.run([_python_of(cli), "-c", _BATCH, cache, str(documents), json.dumps(args)],
                              capture_output=True, text=True, timeout=TIMEOUT_S * max(1, len(folders)), cwd=tmp,
                              env=dict(os.environ, NO_COLOR="1", TERM="dumb"))
        results = []
        for folder, report in zip(folders, reports):
            try:
                data = json.loads(report.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise ValidatorFailed(f"{cli} wrote no report for {folder} (exit {proc.returncode}): "
                                      f"{(proc.stderr or proc.stdout).strip()[-800:]}") from None
            results.append([Issue(check=(issue.get("check") or {}).get("identifier") or "?",
                                  severity=issue.get("severity") or "?", message=issue.get("message") or "",
                                  entity=issue.get("violatingEntity"))
                            for issue in data.get("issues") or []])
    return results


def _judged_folder(crate: Path, unpacked: Path) -> Path:
    """The folder roc-validator judges: the crate folder, or a zipped crate unpacked into `unpacked`."""
    crate = crate.resolve()
    if not crate.is_file():
        return crate
    # roc-validator 0.13's JSON report fails on a zipped crate ("URI is not JSON serializable"):
    # it judges the unpacked folder, which holds the same files
    import zipfile

    try:
        with zipfile.ZipFile(crate) as zf:
            zf.extractall(unpacked)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValidatorFailed(f"{crate} is not a readable zip file ({exc})") from None
    return unpacked


def _command_args(cache: str, profile: str, severity: str, report: Path) -> list[str]:
    """The `rocrate-validator` command line for one crate (its path is appended), offline, a JSON report."""
    return ["-y", "--disable-color", "validate", "--offline", "--cache-path", cache, "-p", profile, "-l", severity,
            "-f", "json", "-o", str(report), "--no-paging"]
