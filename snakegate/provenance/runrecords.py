"""What a run folder's own records say that the PROV record and the RO-Crate both need, and a run's
sensitive values kept out of the files it leaves at rest.

The params Snakemake got (config.yaml), the run's `x-sensitive` values (so records
carry their keyed hash and free text is scrubbed of them), and which params name
input files. `RunSecrets` is the one way a run's sensitive values leave what is
written about it: `[sensitive hmac-sha256:<12 hex>]` (secrets.scrub) in run.json's
fields, in the logs copied into the run folder, in every log and record left there
(console.log, snakemake.log, stderr/, cluster-logs/, the jobs' own log files) and
in Snakemake's job metadata of the run's outputs (`.snakemake/metadata/`, which
records each job's shell command and params). The run's logs are written owner-only
(0600) when its contract marks any param sensitive. Only config.yaml (0600, which
Snakemake needs) keeps the values. It rewrites those files, atomically and only
when they hold a value; it never touches outputs, config.yaml or the workflow copy.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from snakegate.provenance import jobs, runstore, secrets

PRIVATE_MODE = 0o600  # a run's logs when its contract has sensitive params
SHARED_MODE = 0o644
_WHOLE_FILE_BYTES = 64 << 20  # larger logs are scrubbed line by line


def run_config_params(run_dir: Path) -> dict | None:
    """The params of runs/<id>/config.yaml (what Snakemake got: absolute input paths, plaintext values)."""
    try:
        from ruamel.yaml import YAML
        text = runstore.read_record(Path(run_dir) / runstore.CONFIG_YAML).decode("utf-8")  # bounded, regular only
        data = YAML(typ="safe", pure=True).load(text)
    except Exception:  # noqa: BLE001 - unreadable or missing: the caller falls back to invocation.json
        return None
    return data["params"] if isinstance(data, dict) and isinstance(data.get("params"), dict) else None


def _run_values(run_dir: Path, schema: dict) -> list:
    """Every x-sensitive value of a run: from config.yaml (the one record holding them in plain text) and
    invocation.json (a value recorded before it was hashed)."""
    params = run_config_params(run_dir) or {}
    invocation = (runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation") or {})
    found = {**secrets.sensitive_values(schema or {}, invocation.get("params") or {}),
             **secrets.sensitive_values(schema or {}, params)}
    return list(found.values())


def run_secrets(run_dir: Path, registry_root: Path, schema: dict) -> tuple[bytes | None, list[str]]:
    """The registry key and the text of every x-sensitive value of a run (from config.yaml, the one record
    that holds them in plain text), so records can hash them and scrub them out of free text.
    (None, []) when the contract marks nothing sensitive."""
    values = _run_values(run_dir, schema)
    if not values:
        return None, []
    return secrets.registry_key(registry_root), secrets.secret_strings(values)


def scrub(text: str | None, hidden: list[str], key: bytes | None) -> str | None:
    """`text` with every sensitive value replaced by its keyed hash (see secrets.scrub)."""
    return secrets.scrub(text, hidden, key)


def declares_sensitive(schema: Any) -> bool:
    """Whether a contract marks any value `x-sensitive: true`, wherever in it (nested, items, $defs)."""
    if isinstance(schema, dict):
        return schema.get("x-sensitive") is True or any(declares_sensitive(v) for v in schema.values())
    if isinstance(schema, list):
        return any(declares_sensitive(v) for v in schema)
    return False


def log_mode(schema: Any) -> int:
    """The mode a run's logs are created with: owner-only when its contract has sensitive params (a failing
    job may print one; the logs are scrubbed when the run ends, and must not be readable before)."""
    return PRIVATE_MODE if declares_sensitive(schema) else SHARED_MODE


class RunSecrets:
    """A run's sensitive values as text, and the registry key that names them in what replaces them.

    False when the run has none. `mode` is its logs' mode: owner-only when the contract has sensitive params
    (given or not), None when it has none (then nothing here changes a file). Writes never raise: a file
    that cannot be scrubbed is named in run.json's `sensitive_not_scrubbed`."""

    def __init__(self, key: bytes | None, hidden: list[str], private: bool = False):
        self.key, self.hidden = key, hidden
        self.mode = PRIVATE_MODE if private or hidden else None
        self.unscrubbed: list[str] = []

    @classmethod
    def of(cls, registry_root: Path, schema: dict, *param_sets: dict) -> "RunSecrets":
        """From the params a run got (e.g. the gated invocation's)."""
        values = [v for params in param_sets for v in secrets.sensitive_values(schema or {}, params or {}).values()]
        return cls._made(registry_root, schema, values)

    @classmethod
    def of_run(cls, run_dir: Path, registry_root: Path, schema: dict) -> "RunSecrets":
        """From the run folder's config.yaml and invocation.json."""
        return cls._made(registry_root, schema, _run_values(run_dir, schema))

    @classmethod
    def _made(cls, registry_root: Path, schema: dict, values: list) -> "RunSecrets":
        hidden = secrets.secret_strings(values)
        key = None
        if hidden:
            try:
                key = secrets.registry_key(registry_root)
            except secrets.SecretKeyError:
                key = None  # scrubbed to a bare `[sensitive]` then: never left in for want of a key
        return cls(key, hidden, private=declares_sensitive(schema))

    def __bool__(self) -> bool:
        return bool(self.hidden)

    # ---- values -----------------------------------------------------------------------------------
    def text(self, text: str | None) -> str | None:
        return secrets.scrub(text, self.hidden, self.key)

    def data(self, value: Any) -> Any:
        """Any JSON-able value with the secrets scrubbed out of every string (keys too)."""
        if not self.hidden:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and str(value) in self.hidden:
            return self.text(str(value))
        return value

    # ---- files ------------------------------------------------------------------------------------
    def copy(self, source: Path, dest: Path) -> None:
        """A log copied into the run folder whole or not at all, scrubbed, owner-only when the run has secrets."""
        if self.mode is None:
            runstore.copy_atomic(Path(source), Path(dest))
            return
        secrets.replace_file(Path(dest), self._scrubbed_bytes(Path(source).read_bytes()), self.mode)

    def file(self, path: Path, mode: int | None = None) -> None:
        """Rewrite `path` without the secrets when it holds one (atomically, keeping its mode, or `mode`);
        with `mode`, a clean file gets that mode too. A missing file is fine; an unwritable one is noted."""
        path = Path(path)
        try:
            if not path.is_file() or path.is_symlink():
                return
            if path.stat().st_size <= _WHOLE_FILE_BYTES or any("\n" in s for s in self.hidden):
                data = path.read_bytes()
                clean = self._scrubbed_bytes(data)
                if clean != data:
                    secrets.replace_file(path, clean, mode if mode is not None else _mode_of(path))
                elif mode is not None:
                    os.chmod(path, mode)
            else:
                self._file_by_lines(path, mode)
        except OSError:
            self.unscrubbed.append(str(path))

    def json_file(self, path: Path) -> None:
        """A JSON record (Snakemake's job metadata) with the secrets scrubbed out of its values: the text of
        a JSON file holds a value escaped (quotes, backslashes, non-ASCII), so it is scrubbed as data."""
        path = Path(path)
        try:
            data = json.loads(path.read_bytes())
            clean = self.data(data)
            if clean != data:
                secrets.replace_file(path, json.dumps(clean).encode("utf-8"), _mode_of(path))
        except ValueError:
            self.file(path)  # not JSON after all: scrub its text
        except OSError:
            self.unscrubbed.append(str(path))

    def scrub_run(self, run_dir: Path, workdir: Path, *, final: bool = True) -> None:
        """Every log and record of the run and Snakemake's job metadata of its outputs, without the secrets.

        `final`: the run's processes are gone, so console.log (Snakemake's own output) and the log Snakemake
        keeps under `.snakemake/log/` (named in run.json) are scrubbed too; inside Snakemake's handlers
        (final=False) they are still being written. Idempotent: a second pass finds nothing to change."""
        if self.mode is None:
            return  # a contract without sensitive params: nothing to hide, logs stay as they are
        run_dir, workdir = Path(run_dir), Path(workdir)
        record = runstore.read_run(run_dir)
        logs = [runstore.SNAKEMAKE_LOG] + ([runstore.CONSOLE_LOG] if final else [])
        for name in logs:
            self.file(run_dir / name, self.mode)
        for folder in (runstore.STDERR_DIR, runstore.CLUSTER_LOGS_DIR):
            for path in sorted((run_dir / folder).rglob("*")) if (run_dir / folder).is_dir() else ():
                self.file(path, self.mode)
        if not self:
            return  # sensitive params, none given a value: the logs are owner-only, there is nothing to scrub
        for path in self._job_logs(run_dir, workdir):
            self.file(path)
        if final and record.get("snakemake_log"):
            self.file(_under(workdir, record["snakemake_log"]))
        self.metadata(run_dir, workdir)
        clean = self.data(record)
        changed = {k: v for k, v in clean.items() if record.get(k) != v}
        if self.unscrubbed:
            changed["sensitive_not_scrubbed"] = sorted(set(self.unscrubbed))
        if changed:
            try:
                runstore.update_run(run_dir, **changed)
            except OSError:
                pass  # the run's own writer reports a record it cannot write

    def metadata(self, run_dir: Path, workdir: Path) -> None:
        """Snakemake's records of the jobs that wrote into this run folder (keys under it, relative to the
        working directory or absolute); other runs' records are never touched."""
        base = Path(workdir) / ".snakemake" / "metadata"
        if not self or not base.is_dir():
            return
        under = {os.path.abspath(run_dir) + os.sep}
        rel = os.path.relpath(os.path.abspath(run_dir), os.path.abspath(workdir))
        if not rel.startswith(".."):
            under.add(Path(rel).as_posix() + "/")
        for key, path in jobs.record_files(base):
            if key.startswith(tuple(under)):
                self.json_file(Path(path))

    def _job_logs(self, run_dir: Path, workdir: Path) -> list[Path]:
        """The `log:` files of the run's jobs that lie inside the run folder (from Snakemake's log)."""
        text = ""
        for name in (runstore.SNAKEMAKE_LOG, runstore.CONSOLE_LOG):
            try:
                text = (run_dir / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if text:
                break
        summary = jobs.read_log(text)
        named = {p for job in summary.jobs for p in job.logs} | {p for f in summary.failed for p in f.log}
        inside = os.path.abspath(run_dir) + os.sep
        return sorted({p for p in (_under(workdir, n) for n in named) if os.path.abspath(p).startswith(inside)})

    def _scrubbed_bytes(self, data: bytes) -> bytes:
        # surrogateescape: bytes that are not UTF-8 come back exactly as they were
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def _file_by_lines(self, path: Path, mode: int | None) -> None:
        changed = False
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".scrub", dir=path.parent)
        try:
            with open(path, "rb") as src, os.fdopen(fd, "wb") as out:
                for line in src:
                    clean = self._scrubbed_bytes(line)
                    changed = changed or clean != line
                    out.write(clean)
                out.flush()
                os.fchmod(out.fileno(), mode if mode is not None else _mode_of(path))
                os.fsync(out.fileno())
            if changed:
                os.replace(tmp, path)
            elif mode is not None:
                os.chmod(path, mode)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _under(workdir: Path, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else Path(workdir) / p


def _mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


def artifact_params(schema: dict, params: dict) -> dict[str, tuple[str, str]]:
    """Input file value -> (param name, artifact type) for every `x-artifact` param."""
    out = {}
    for parts, sub, value in secrets.walk(schema, params):
        if sub.get("x-artifact") and isinstance(value, str):
            out[value] = (".".join(str(p) for p in parts if not isinstance(p, int)), sub["x-artifact"])
    return out
