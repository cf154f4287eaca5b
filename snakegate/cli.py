"""The `snakegate` command line: parser and dispatch. Each command checks, calls the core, shapes the answer.

Exit codes: 0 ok, 1 invalid (refused by the gate or a check, or the run failed),
2 usage or environment error, 130 interrupted. A user mistake is one message
on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from functools import cached_property

from snakegate import __version__
from snakegate.errors import ExitCode, UserError

EPILOG = "exit codes: 0 ok · 1 invalid (gate/check refused, run failed) · 2 usage or environment error · 130 interrupted"


class Context:
    """What every command needs, loaded on first use so `--help` stays instant."""

    def __init__(self, args: argparse.Namespace):
        self.args = args

    @cached_property
    def settings(self):
        from snakegate.registry.settings import settings_for
        return settings_for(self.args.registry)

    @cached_property
    def registry(self):
        from snakegate.registry.workflows import Registry
        return Registry.load(self.settings.registry_root)

    def workflow(self, workflow_id: str):
        wf = self.registry.get(workflow_id)
        if wf is None:
            if workflow_id in self.registry.broken:
                raise UserError(self.registry.broken[workflow_id], ExitCode.INVALID)
            from snakegate.contract.dialect import did_you_mean
            close = did_you_mean(workflow_id, self.registry.ids())
            hint = f"; did you mean `{close}`?" if close else f"; available: {', '.join(self.registry.ids())}"
            raise UserError(f"no workflow `{workflow_id}` in the registry at {self.registry.root}{hint}", ExitCode.INVALID)
        return wf


class Parser(argparse.ArgumentParser):
    def error(self, message):  # usage mistakes exit 2 with the usage line, as argparse does, but say how to get help
        self.print_usage(sys.stderr)
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:

    parser = Parser(prog="snakegate", description="Talk freely, execute strictly: curated Snakemake workflows behind a gate.",
                    epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"snakegate {__version__}")
    parser.add_argument("--registry", metavar="DIR", help="registry root (default: $SNAKEGATE_REGISTRY or the nearest "
                        "folder at or above the current one that holds workflows/)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for module in _command_modules():
        module.register(sub, EPILOG)
    return parser


def _command_modules():
    import importlib
    names = ["registry_cmds", "new_cmds", "check_cmds", "run_cmds", "prov_cmds", "refine_cmds", "report_cmds", "chat_cmds", "mcp_cmds"]
    out = []
    for name in names:
        try:
            out.append(importlib.import_module(f"snakegate.commands.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"snakegate.commands.{name}":
                raise
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if getattr(args, "passes_to_snakemake", False):
            print(f"snakegate {args.command}: {' '.join(extra)} is not passed to Snakemake; only --cores, --executor, "
                  "--jobs and --profile are (anything else could bypass what the gate approved)", file=sys.stderr)
            return ExitCode.USAGE
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "handler", None):
        parser.print_help()
        return ExitCode.USAGE
    try:
        code = args.handler(Context(args))
    except UserError as exc:
        print(f"snakegate: {exc.message}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("snakegate: interrupted", file=sys.stderr)
        code = ExitCode.CANCELLED
    except BrokenPipeError:
        code = ExitCode.OK
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
