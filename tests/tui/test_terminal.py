"""`snakegate chat` in a real terminal: tmux at 80x24 (a private server socket, only our session), the real
console command, keys typed as a person types them, the screen read back with capture-pane.

Skipped with a message where tmux is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from registry_copies import clean_env, make_registry

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One detached tmux session on a server of our own (-L), so nothing else of the user's is touched."""

    def __init__(self, command: list[str], cwd, env: dict, size=(80, 24)):
        self.socket = f"snakegate-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.session = "chat"
        self._tmux("new-session", "-d", "-s", self.session, "-x", str(size[0]), "-y", str(size[1]),
                   "-c", str(cwd), *[f"-e{k}={v}" for k, v in env.items()], " ".join(command))

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=30).stdout

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.session, "-l", text)
        self._tmux("send-keys", "-t", self.session, "Enter")

    def key(self, key: str) -> None:
        self._tmux("send-keys", "-t", self.session, key)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, text: str, timeout: float) -> str:
        deadline, shown = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} did not show within {timeout:.0f} s; the screen:\n{shown}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


def test_a_guided_run_at_80x24_in_tmux_shows_the_succeeded_run_and_its_summary(tmp_path):
    root = make_registry(tmp_path / "registry", with_git=True)
    env = {k: v for k, v in clean_env().items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH",
                                                           "VIRTUAL_ENV")}
    env.setdefault("LANG", "C.UTF-8")
    term = Tmux([sys.executable, "-m", "snakegate.cli", "chat", "--guided", "--user", "Ada"], root, env)
    try:
        term.wait_for("guided dialogue", 60)
        term.type("profile a csv table")
        term.wait_for("dataset_file", 60)
        term.type("data/examples/tabular-penguins.csv")
        time.sleep(1)
        term.type("done")
        term.wait_for("Ready", 60)
        term.key("C-r")
        shown = term.wait_for("✓ succeeded", 300)  # the outcome in the run panel
        run_id = next(p.name for p in (root / "runs").iterdir())
        assert f"run {run_id}" in shown
        # the result summary in the chat, on the same screen: it ends with the first rows of the cleaned table
        # (its verdict and key numbers above are read in full by the pilot tests in test_run_flow.py)
        shown = term.wait_for("rows of cleaned", 30)
        assert "| species | island |" in shown and "its run succeeded" in shown
        assert "Used" in shown and "ctrl+r" in shown  # the draft's state and the approve key, without scrolling
        term.key("C-q")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "chat" in term._tmux("list-sessions", "-F", "#S"):
            time.sleep(0.2)
    except subprocess.CalledProcessError:
        pass  # the session ended with the app: list-sessions fails once the server is gone
    finally:
        term.close()
    assert "Traceback" not in (root / "runs" / run_id / "run.json").read_text()
