"""`snakegate chat` as a command: terminal check, flags, who approves, and a real start in a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from registry_copies import clean_env, make_registry, one_rule_workflow
from snakegate.commands.chat_cmds import default_approver


# A run that takes a few seconds: long enough to quit during it, short enough to wait for its record.
NAP_NOTE = one_rule_workflow("nap-note", "Nap note", "Waits 8 seconds, then writes a note.",
                             "sleep 8 && echo {params.label} > {output.note}")


def test_chat_without_a_terminal_exits_2_and_points_to_validate_and_run(cli, tmp_path):
    root = make_registry(tmp_path / "registry")
    code, out, err = cli("--registry", root, "chat", "--guided")  # pytest captures stdout: not a terminal
    assert code == 2
    assert "needs an interactive terminal" in err
    assert "snakegate validate" in err and "snakegate run" in err
    assert "Traceback" not in out + err


def test_guided_with_a_model_is_a_usage_error(cli, tmp_path):
    root = make_registry(tmp_path / "registry")
    code, _, err = cli("--registry", root, "chat", "--guided", "--model", "qwen2.5:7b")
    assert code == 2
    assert "--guided" in err and "--model" in err


def test_chat_help_lists_its_flags(cli):
    code, out, _ = cli("chat", "--help")
    assert code == 0
    for flag in ("--guided", "--model", "--base-url", "--user"):
        assert flag in out


def test_approver_defaults_to_git_user_name(tmp_path):
    root = make_registry(tmp_path / "registry", with_git=True)  # repository config: user.name Ada Tester
    assert default_approver(root) == "Ada Tester"


def test_approver_falls_back_to_the_login_name_outside_git(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # no global git config either
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("USER", "grace")
    folder = tmp_path / "plain"
    folder.mkdir()
    assert default_approver(folder) == "grace"


class Terminal:
    """`snakegate chat ARGS` in a pseudo-terminal of its own (80x24 unless told), read as bytes."""

    def __init__(self, root, *args: str, size=(80, 24)):
        self.main, child = pty.openpty()
        env = clean_env(TERM="xterm-256color", COLUMNS=str(size[0]), LINES=str(size[1]))
        self.proc = subprocess.Popen([sys.executable, "-m", "snakegate.cli", "chat", *args], cwd=root, env=env,
                                     stdin=child, stdout=child, stderr=child, close_fds=True)
        os.close(child)
        self.seen = b""

    def read_until(self, needle: bytes | None, timeout: float) -> bytes:
        """Read until `needle` shows up, or (None) until the command exits; returns what came."""
        out = _read_until(self.main, needle, timeout, proc=self.proc if needle is None else None)
        self.seen += out
        return out

    def write(self, data: bytes) -> None:
        os.write(self.main, data)

    def text(self) -> str:
        return b" ".join(self.seen.split()).decode(errors="replace")

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.main)


def test_chat_starts_in_a_terminal_and_quits_with_ctrl_q(tmp_path):
    """The real console command in a pseudo-terminal: it paints the greeting, and ctrl+q ends it with exit 0."""
    root = make_registry(tmp_path / "registry")
    with Terminal(root, "--guided", "--user", "Ada", size=(120, 40)) as term:
        assert b"guided" in term.read_until(b"guided", timeout=60), term.seen[-2000:]
        term.write(b"\x11")  # ctrl+q
        # keep reading: a terminal nobody reads fills up, and the app would block writing its last frame
        term.read_until(None, timeout=30)
        assert term.proc.wait(timeout=5) == 0
    assert b"Traceback" not in term.seen


def test_a_model_without_a_server_url_ends_the_chat_with_exit_2_naming_the_fix(tmp_path):
    """The registry and the backend are set up after the first paint; a setting that cannot work still ends
    the command with a sentence and exit 2, as every other usage mistake does."""
    root = make_registry(tmp_path / "registry")
    with Terminal(root, "--model", "qwen2.5:7b", "--user", "Ada") as term:
        term.read_until(None, timeout=60)
        assert term.proc.wait(timeout=10) == 2
    assert "no server URL" in term.text() and "--guided" in term.text()
    assert "Traceback" not in term.text()


def test_quitting_during_a_run_ends_the_chat_at_once_and_the_run_records_itself(tmp_path):
    """ctrl+q twice while a run goes: the command ends within seconds, naming the run, and the run (detached
    Snakemake) finishes and records itself without the chat."""
    root = make_registry(tmp_path / "registry", {"nap-note": NAP_NOTE})
    with Terminal(root, "--guided", "--user", "Ada") as term:
        term.read_until(b"guided", timeout=60)
        for text, answer in ((b"nap-note\r", b"label"), (b"done\r", b"Ready")):
            term.write(text)
            term.read_until(answer, timeout=60)
        term.write(b"\x12")  # ctrl+r
        term.read_until(b"step", timeout=60)
        term.write(b"\x11")  # ctrl+q: warns that the run goes on
        term.read_until(b"goes on", timeout=10)
        quit_at = time.monotonic()
        term.write(b"\x11")
        term.read_until(None, timeout=20)
        assert term.proc.wait(timeout=5) == 0
        assert time.monotonic() - quit_at < 10  # not the 8 s nap, nor the run's recording
    (run_dir,) = (root / "runs").iterdir()
    assert f"run {run_dir.name} goes on in the background" in term.text()
    deadline = time.monotonic() + 120
    while json.loads((run_dir / "run.json").read_text()).get("status") == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and (run_dir / "results" / "note.txt").is_file()
    assert record["origin"]["approved_by"] == "Ada"


def test_ctrl_q_during_a_model_request_ends_the_process_at_once(tmp_path):
    """The model takes 30 s to answer; ctrl+q still ends the real command within seconds (the request runs in a
    thread nobody waits for), instead of a blank terminal until the request times out."""
    root = make_registry(tmp_path / "registry")
    server = ScriptedOpenAI(["too late"], delay=30)
    base_url = server.start()
    try:
        with Terminal(root, "--model", DEFAULT_MODEL, "--base-url", base_url, "--user", "Ada") as term:
            term.read_until(b"Hello", timeout=60)  # the greeting
            term.write(b"hello\r")
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:
                term.read_until(None, timeout=0.2)  # keep reading the terminal while waiting
            assert server.requests, "the message never reached the model server"
            quit_at = time.monotonic()
            term.write(b"\x11")  # ctrl+q
            term.read_until(None, timeout=20)
            assert term.proc.wait(timeout=5) == 0
            assert time.monotonic() - quit_at < 10
    finally:
        server.stop()
    assert b"Traceback" not in term.seen


def _read_until(fd: int, needle: bytes | None, timeout: float, proc=None) -> bytes:
    """Read the terminal until `needle` shows up (or, with `proc`, until it exits)."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if needle is not None and needle in out or proc is not None and proc.poll() is not None:
            break
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:  # EIO: the app closed the terminal
                break
    return out
