"""Verdicts: a run's outputs judged by its workflow's `evaluate:` checks (workflow.yaml), as plain data.

A check names a declared output, what to measure in it (a JSON pointer into a json output, or an aggregate
of one column of a table output), a comparison and a threshold (a number, or the run's value of a numeric
param), a sentence for a person and the params to look at. `verdict(manifest, params, read_output)` gives

    {"status": "pass" | "fail" | "unknown",
     "checks": [{"name", "status", "value", "test", "threshold", "says", "params", "output", "measure",
                 "reason" (unknown only), "threshold_param" (a {param} threshold only),
                 "values" (a pointer with {param} placeholders only: [{"at": concrete pointer, "value",
                           "status"}], one per item)}]}

A check is `unknown` when it cannot be measured: the output is missing, unreadable or too big (see
snakegate.contract.output_files), not made for these params (its `when`), the value is absent or not a
finite number, or a `{param}` threshold has no number in this run; `reason` says which, never quoting the
output's content (an output may hold anything). The run's status is `fail` when any check fails, else
`unknown` when any check is unknown or there are none, else `pass`.

A pointer may hold `{param}` placeholders (as output paths do): `/targets/{target_properties}/r2` is
measured for every item of the list param (each escaped as RFC 6901 says); the check passes when every
item passes, `values` lists each item's, and `value` is the worst (the smallest for `>`/`>=`, the largest for
`<`/`<=`, else the first that fails).

Pure: `read_output(name)` is the only way to an output (it returns a `JsonOutput` or a `TableOutput`, or
raises `Unreadable`), nothing is read or written here.
"""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from typing import Any, Callable, Iterable

from snakegate.contract.output_files import JsonOutput, TableOutput, Unreadable
from snakegate.contract.outputs import ABSENT, param_value, placeholders, produced_when

TESTS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
}
AGGREGATES = ("mean", "median", "min", "max", "sum", "count", "std")
# cells pandas.read_csv reads as missing (its default na_values): left out of every aggregate
MISSING_CELLS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                           "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
STATUSES = ("pass", "fail", "unknown")

Reader = Callable[[str], "JsonOutput | TableOutput"]


class _Unknown(Exception):
    """This check cannot be measured; the message says why."""


def verdict(manifest, params: dict, read_output: Reader, *, prefix: str = "") -> dict:
    """The verdict of one workflow's checks over one run's outputs. `prefix` (a plan's `<step>.`) goes before
    every check's and output's name, and `read_output` is then asked for `<step>.<output>`."""
    cache: dict[str, Any] = {}

    def read(name: str):
        if name not in cache:
            try:
                cache[name] = read_output(name)
            except Unreadable as exc:
                cache[name] = exc
        if isinstance(cache[name], Unreadable):
            raise _Unknown(str(cache[name]))
        return cache[name]

    checks = [judge(prefix + name, check, manifest.outputs.get(check.output), params, read, prefix)
              for name, check in manifest.evaluate.items()]
    return {"status": overall(checks), "checks": checks}


def overall(checks: list[dict]) -> str:
    """`fail` when any check fails, else `unknown` when any is unknown (or there is none), else `pass`."""
    statuses = [c.get("status") for c in checks]
    if "fail" in statuses:
        return "fail"
    if not statuses or any(s != "pass" for s in statuses):
        return "unknown"
    return "pass"


def measure_text(check) -> str:
    """What a check measures, for a person: its JSON pointer, or `median(r2)`."""
    value = check.value
    return value if isinstance(value, str) else f"{value.aggregate}({value.column})"


def judge(name: str, check, decl, params: dict, read: Callable[[str], Any], prefix: str = "") -> dict:
    """One check's record (see the module docstring)."""
    record: dict[str, Any] = {"name": name, "status": "unknown", "value": None, "test": check.test,
                              "threshold": None, "says": check.says, "params": list(check.params),
                              "output": prefix + check.output, "measure": measure_text(check)}
    try:
        if not isinstance(check.threshold, (int, float)):
            record["threshold_param"] = check.threshold.param
        record["threshold"] = threshold = _threshold(check.threshold, params)
        if decl is None:
            raise _Unknown(f"output `{check.output}` is not declared in workflow.yaml")
        if not produced_when(decl, params):
            raise _Unknown(f"output `{check.output}` is not made for these params (its `when`)")
        if placeholders(decl.path):
            raise _Unknown(f"output `{check.output}` is a path pattern ({decl.path}); a check reads one file")
        output = read(prefix + check.output)
        if isinstance(check.value, str):
            _pointers(record, check, params, output, threshold)
        else:
            value = _aggregate(output, check.value.column, check.value.aggregate, check.output)
            record["value"] = value
            record["status"] = "pass" if TESTS[check.test](value, threshold) else "fail"
    except _Unknown as exc:
        record["status"] = "unknown"
        record["reason"] = str(exc)
    return record


def _threshold(threshold, params: dict) -> float | int:
    if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        return threshold
    value = param_value(params, threshold.param)
    if value is ABSENT or value is None:
        raise _Unknown(f"the threshold is param `{threshold.param}`, which has no value in this run")
    return _number(value, f"the threshold, param `{threshold.param}`,")


def _number(value: Any, what: str) -> float | int:
    """`value` when it is a finite JSON number (true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kinds = {bool: "a boolean", str: "a string", list: "a list", dict: "an object", type(None): "null"}
        raise _Unknown(f"{what} is {kinds.get(type(value), 'not a number')}, not a number")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        finite = False
    if not finite:
        raise _Unknown(f"{what} is not a finite number")
    return value


# -- a JSON pointer ------------------------------------------------------------------------------------


def _escape(item: str) -> str:
    return item.replace("~", "~0").replace("/", "~1")


def concrete_pointers(pointer: str, params: dict) -> list[str]:
    """Every pointer `pointer` stands for: itself, or one per item (per combination) of its `{param}`s."""
    names = list(dict.fromkeys(placeholders(pointer)))
    if not names:
        return [pointer]
    choices = []
    for name in names:
        value = param_value(params, name)
        items = [value] if isinstance(value, (str, int)) and not isinstance(value, bool) else value
        if not isinstance(items, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in items):
            raise _Unknown(f"`{{{name}}}` in the pointer names param `{name}`, which holds no list of names in this run")
        if not items:
            raise _Unknown(f"`{{{name}}}` in the pointer names param `{name}`, which holds no items in this run")
        choices.append([str(v) for v in items])
    out = []
    for combo in itertools.product(*choices):
        concrete = pointer
        for name, item in zip(names, combo):
            concrete = concrete.replace(f"{{{name}}}", _escape(item))
        out.append(concrete)
    return list(dict.fromkeys(out))


def pointer_value(document: Any, pointer: str) -> Any:
    """The value `pointer` (RFC 6901) names in `document`, or ABSENT."""
    if not pointer.startswith("/"):
        return ABSENT
    node = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isascii() and token.isdigit() and (token == "0" or token[0] != "0") \
                and int(token) < len(node):
            node = node[int(token)]
        else:
            return ABSENT
    return node


def _pointers(record: dict, check, params: dict, output, threshold) -> None:
    if not isinstance(output, JsonOutput):
        raise _Unknown(f"the value is a JSON pointer, but output `{check.output}` is a table")
    pointers = concrete_pointers(check.value, params)
    test = TESTS[check.test]
    values: list[dict] = []
    unknown: list[str] = []
    for pointer in pointers:
        item = {"at": pointer, "value": None, "status": "unknown"}
        values.append(item)
        found = pointer_value(output.document, pointer)
        if found is ABSENT:
            unknown.append(f"{pointer} names nothing in output `{check.output}`")
            continue
        try:
            number = item["value"] = _number(found, f"{pointer} in output `{check.output}`")
        except _Unknown as exc:
            unknown.append(str(exc))
            continue
        item["status"] = "pass" if test(number, threshold) else "fail"
    if len(pointers) > 1 or pointers[0] != check.value:
        record["values"] = values
    known = [v["value"] for v in values if v["value"] is not None]
    failing = [v["value"] for v in values if v["status"] == "fail"]
    if known:
        if check.test in (">", ">="):
            record["value"] = min(known)
        elif check.test in ("<", "<="):
            record["value"] = max(known)
        else:
            record["value"] = failing[0] if failing else known[0]
    if failing:
        record["status"] = "fail"
    elif unknown:
        raise _Unknown(unknown[0] + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
    else:
        record["status"] = "pass"


# -- a column aggregate --------------------------------------------------------------------------------


def _aggregate(output, column: str, how: str, name: str) -> float | int:
    if not isinstance(output, TableOutput):
        raise _Unknown(f"the value is a column aggregate, but output `{name}` is not a table")
    if column not in output.header:
        raise _Unknown(f"output `{name}` has no column `{column}`")
    try:
        return aggregate(output.cells(column), how, f"column `{column}` of output `{name}`")
    except Unreadable as exc:
        raise _Unknown(str(exc)) from None


def aggregate(cells: Iterable[str], how: str, what: str = "the column") -> float | int:
    """`how` (one of AGGREGATES) over the numeric cells; empty and NA cells (as pandas reads them) are left
    out, any other cell that is not a number makes the result unknown. `std` is the sample standard
    deviation (n - 1), as pandas'."""
    numbers = array("d")
    for row, cell in enumerate(cells, start=1):
        text = cell.strip()
        if text in MISSING_CELLS:
            continue
        try:
            if "_" in text:  # float() takes 1_000; pandas does not
                raise ValueError
            numbers.append(float(text))
        except ValueError:
            raise _Unknown(f"row {row} of {what} is not a number") from None
    if how == "count":
        return len(numbers)
    if how == "sum":
        value = math.fsum(numbers)
    elif not numbers:
        raise _Unknown(f"{what} has no numeric cells")
    elif how == "mean":
        value = math.fsum(numbers) / len(numbers)
    elif how == "min":
        value = min(numbers)
    elif how == "max":
        value = max(numbers)
    elif how == "median":
        ordered = sorted(numbers)
        mid = len(ordered) // 2
        value = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    elif how == "std":
        if len(numbers) < 2:
            raise _Unknown(f"{what} has fewer than 2 numeric cells, so no standard deviation")
        mean = math.fsum(numbers) / len(numbers)
        value = math.sqrt(math.fsum((x - mean) ** 2 for x in numbers) / (len(numbers) - 1))
    else:
        raise _Unknown(f"`{how}` is not an aggregate (one of {', '.join(AGGREGATES)})")
    return _number(value, f"the {how} of {what}")
