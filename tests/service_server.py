"""Start ``ragdial serve`` as a real uvicorn process on 127.0.0.1 for the HTTP and browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A ``ragdial serve`` subprocess; ``start()`` waits (bounded) until /healthz answers."""

    def __init__(
        self,
        tmp: Path,
        config: dict,
        workers: int = 1,
        api_key: str | None = None,
        db: Path | None = None,
        args: tuple[str, ...] = (),
    ):
        self.tmp = tmp
        self.config_path = tmp / "system.yaml"
        self.config_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        self.db = db or tmp / "sessions.sqlite"
        self.workers = workers
        self.api_key = api_key
        self.args = args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log = tmp / f"server-{self.port}.log"

    def start(self, timeout: float = 120.0) -> Server:
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'tests'}"}
        env.pop("RAGDIAL_API_KEY", None)
        command = [sys.executable, "-c", "from ragdial.cli import main; main()", "serve"]
        command += ["--config", str(self.config_path), "--db", str(self.db), "--port", str(self.port)]
        command += ["--workers", str(self.workers), "--log-level", "warning"]
        if self.api_key:
            command += ["--api-key", self.api_key]
        command += list(self.args)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not answer within {timeout} s: {self.log.read_text()[-2000:]}")

    def wait_for_log(self, text: str, timeout: float = 30.0) -> str:
        """The server's output once it contains ``text`` (bounded wait)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log.read_text(encoding="utf-8", errors="replace")
            if text in log:
                return log
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not in the server output within {timeout} s: {log[-2000:]}")

    def kill(self) -> None:
        """Kill the server and its workers at once (SIGKILL to the process group), as a crash would."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def headers(self, key: str | None = None) -> dict[str, str]:
        key = key or (self.api_key.split(",")[0] if self.api_key else None)
        return {"Authorization": f"Bearer {key}"} if key else {}
