"""Fixtures for the MCP tests: a throw-away registry (git repository, tabular-profile, a workflow with a
sensitive token, the demo tables). Readers of what the server left behind are in mcp_session.py.

Every test starts its own `snakegate mcp` process in that registry (tests/agent/mcp/mcp_session.py), so
nothing is ever written into the checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_session import SECRET_NOTE
from registry_copies import make_registry


@pytest.fixture
def registry(tmp_path) -> Path:
    return make_registry(tmp_path / "registry", {"secret-note": SECRET_NOTE}, with_git=True)
