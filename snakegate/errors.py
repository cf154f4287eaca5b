"""The one refusal type for mistakes a user can make, and the CLI's documented exit codes.

Anything raised as `UserError` is printed as one clear message and ends the
command with its exit code; it never becomes a traceback.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of every `snakegate` command."""

    OK = 0
    INVALID = 1  # the input was understood and refused (gate errors, check errors, failed run)
    USAGE = 2  # usage or environment error (bad flag, no registry, unreadable file)
    CANCELLED = 130  # interrupted by the user (Ctrl-C)


class UserError(Exception):
    """A mistake the user can fix: the message names the thing, the value and the fix."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.USAGE):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
