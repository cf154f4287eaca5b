"""The runs every report test reads, made once per session: prov_runs.py's kinds (succeeded, failed,
cancelled, fork, rerun, plain; defined in tests/conftest.py, shared with the provenance and command tests)
and report_runs.py's (chat, mcp, incomplete, interrupted, hostile, leaky), in the same registry.

Fixtures imported into a conftest are shared by every module below it; imported into each test module
they would be made again per module."""

from report_runs import (chat_run, hostile_run, incomplete_run, interrupted_run, leaky_run,  # noqa: F401
                         mcp_run)
