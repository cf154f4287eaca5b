"""A registry's own artifact types: `[types.<name>]` tables in its snakegate.toml, added to the built-in ones.

    [types.gtf]
    description = "GTF gene annotation: nine tab-separated columns, no header"
    extensions = [".gtf"]
    check = "columns"
    columns = 9

    [types.pdf]
    description = "A PDF document"
    extensions = [".pdf"]
    check = "magic"
    magic = "25504446"            # %PDF

    [types.csv-latin1]
    description = "A comma-separated table saved by an older spreadsheet"
    check = "table"
    delimiter = ","
    encoding = "latin-1"

Each entry takes the fields of snakegate/schemas/artifact-type.schema.json, and only those its check
reads. `registry_types()` reads the file and validates it (pure but for reading snakegate.toml); a
mistake is a `TypesError` naming `types.<name>.<field>`, the value and the fix. A registry adds types;
it never redefines a built-in one, so `csv-table` means the same in every registry. Nothing is written.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from snakegate import metaschemas
from snakegate.contract.dialect import did_you_mean
from snakegate.errors import UserError
from snakegate.registry.settings import SETTINGS_FILE

NAME = re.compile(r"^[a-z0-9][a-z0-9._+-]{0,39}$")
# what each check reads beyond description, extensions and check
READS = {
    "none": set(), "directory": set(), "npz": set(), "magic": {"magic"},
    "text": {"encoding", "sequences"}, "json": {"encoding"}, "markup": {"tag", "encoding"},
    "prefix": {"prefix", "encoding", "sequences"}, "gzip": {"inner_magic", "inner_prefix"},
    "table": {"delimiter", "table", "encoding"}, "gff3": {"sequences"},
    "columns": {"columns", "min_columns", "comment", "delimiter", "encoding"},
}
SEE = "see README.md, \"Your own registry\", and snakegate/schemas/artifact-type.schema.json"


class TypesError(UserError):
    """The registry's [types] section is not a set of valid artifact types; the message names the field."""


def registry_types(root: Path) -> dict[str, dict]:
    """The artifact types the registry at `root` adds ({} when its snakegate.toml declares none)."""
    path = root / SETTINGS_FILE
    if not path.is_file():
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TypesError(f"{path} is not valid TOML ({exc}); fix the file or remove it to use the defaults")
    declared = data.get("types", {})
    problems = type_problems(declared)
    if problems:
        raise TypesError(f"{path}: the registry's artifact types are not valid:\n  - " + "\n  - ".join(problems)
                         + f"\n  ({SEE})")
    return declared


def use_types_of(root: Path) -> None:
    """Put the registry at `root`'s types in force (metaschemas.artifact_types), replacing any other
    registry's: what `check`, the gate and `draft` type files with. Raises TypesError, leaving the
    built-in types alone in force."""
    metaschemas.use_registry_types({})  # types that do not load leave no other registry's in force
    metaschemas.use_registry_types(registry_types(root))


def type_problems(declared) -> list[str]:
    """Sentences for every way a [types] table fails (pure): each names `types.<name>.<field>` and the fix."""
    if not isinstance(declared, dict):
        return [f"types: must be a table of types ([types.<name>] sections), got {declared!r}"]
    builtin = metaschemas.builtin_artifact_types()
    validator = metaschemas.validator("artifact-type.schema.json")
    known = sorted(validator.schema["properties"])
    problems = []
    for name, spec in declared.items():
        where = f"types.{name}"
        if name in builtin:
            problems.append(f"{where}: `{name}` is a built-in type; a registry adds types and never redefines one "
                            "(choose another name, e.g. `{name}-lab`)".replace("{name}", name))
            continue
        if not NAME.match(name):
            problems.append(f"{where}: the name must be 1-40 lowercase letters, digits, '.', '_', '+' or '-', "
                            "starting with a letter or digit")
        if not isinstance(spec, dict):
            problems.append(f"{where}: must be a table of fields (description, extensions, check, ...), got {spec!r}")
            continue
        for err in sorted(validator.iter_errors(spec), key=lambda e: (list(e.absolute_path), e.message)):
            problems.append(_sentence(where, err, known))
        check = spec.get("check")
        if check in READS:
            for field in sorted(set(spec) - READS[check] - {"description", "extensions", "check"}):
                if field in known:
                    problems.append(f"{where}.{field}: check `{check}` does not read it; remove it, or choose the "
                                    "check that does")
        encoding = spec.get("encoding")
        if isinstance(encoding, str):
            try:
                codecs.lookup(encoding)
            except LookupError:
                problems.append(f"{where}.encoding: {encoding!r} is not a text encoding Python knows; use e.g. "
                                "\"latin-1\", \"cp1252\" or \"utf-16\"")
    return problems


def _sentence(where: str, err, known: list[str]) -> str:
    path = ".".join(str(p) for p in err.absolute_path)
    field = f"{where}.{path}" if path else where
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(known))
        hints = [f"`{e}`" + (f" (did you mean `{close}`?)" if (close := did_you_mean(e, known)) else "")
                 for e in extra]
        return f"{where}: unknown field(s) {', '.join(hints)}; a type takes {', '.join(known)}"
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return f"{where}.{missing}: is required" + (f" for check `{err.instance.get('check')}`"
                                                   if missing != "check" and "check" in err.instance else "")
    if err.validator == "oneOf" and path == "":
        return f"{where}: check `columns` needs exactly one of `columns` (every row) or `min_columns` (at least)"
    if err.validator == "enum":
        choices = [str(c) if c != "\t" else "\\t" for c in err.validator_value]
        close = did_you_mean(str(err.instance), choices) if isinstance(err.instance, str) else None
        return (f"{field}: {err.instance!r} is not one of {', '.join(choices)}"
                + (f"; did you mean `{close}`?" if close else ""))
    what = err.schema.get("description") if isinstance(err.schema, dict) else None
    return f"{field}: {err.message}" + (f" ({what})" if what and err.validator == "pattern" else "")
