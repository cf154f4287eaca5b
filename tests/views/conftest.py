"""The runs every report test reads, made once per session for this folder: prov_runs.py's kinds
(succeeded, failed, cancelled, fork, rerun, plain) and report_runs.py's (chat, mcp, incomplete, interrupted, hostile, leaky).

Fixtures imported into a conftest are shared by every module below it; imported into each test module
they would be made again per module."""

from prov_runs import (cancelled_run, failed_run, fork_run, plain_run, prov_registry, rerun_run,  # noqa: F401
                       succeeded_run)
from report_runs import (chat_run, hostile_run, incomplete_run, interrupted_run, leaky_run,  # noqa: F401
                         mcp_run)
