"""Writing a draft: the run config a Proposal describes, as the file the researcher approves.

The same proposal always gives the same bytes (so two conversations never
disagree about a file); a fork's draft names its parent run in a comment.
The file runs unchanged with `snakegate run` or plain `snakemake
--configfile`. Sensitive values may be in it (Snakemake needs them), so every
draft is created with mode 0600 from its first byte (never chmod-ed after the
secret is on disk), under a temp name no other writer shares, then renamed into
place. Writes only the one file under the drafts folder.
"""

from __future__ import annotations

from pathlib import Path

from snakegate.agent.actions.base import Proposal
from snakegate.agent.events import Draft
from snakegate.agent.prompt import relative
from snakegate.config.write import dump_config, write_atomic


DRAFT_MODE = 0o600  # owner only, from the first byte: a draft may hold x-sensitive values in plain text

# How each door tells the person to approve a draft (the header's second line)
APPROVE_IN = {"chat": "Approve it in the chat", "mcp": "Confirm it when your MCP client asks"}


def draft_text(p: Proposal, root: Path, door: str = "chat") -> str:
    config = {"workflow": p.workflow, "version": p.version, "invocation_id": p.invocation_id, "params": p.params}
    text = (f"# Draft run config from snakegate {door}; it passed the gate.\n"
            f"# {APPROVE_IN[door]}, or run it yourself: snakegate run {relative(p.config_path, root)}\n")
    if p.fork is not None:
        text += (f"# A fork of run {p.fork.parent_run} ({', '.join(p.fork.changes)} changed): once approved "
                 f"it re-runs only {', '.join(p.fork.changed_rules)} and what follows.\n")
    return text + dump_config(config)


def write_draft(p: Proposal, root: Path, door: str = "chat") -> Draft:
    """Write the proposal's draft file; raises OSError/ValueError when it cannot be written."""
    text = draft_text(p, root, door)
    p.config_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p.config_path, text, mode=DRAFT_MODE)
    return Draft(workflow=p.workflow, version=p.version, invocation_id=p.invocation_id, params=p.params,
                 config_path=p.config_path, config_text=text, fork=p.fork)
