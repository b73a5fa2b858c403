"""Start the HTTP service with uvicorn: in this process (one worker, the systems already built) or in several
worker processes that each build (and warm) their own systems and share the session store.

``check_port`` runs before anything is loaded, so a port in use is one clear line instead of a model load and a
crash; "ready" is printed only once ``/healthz`` answers ok on the real port (every component warmed).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import tempfile
import threading
import time
import urllib.request
from dataclasses import replace

from ragdial.errors import RagdialError
from ragdial.serve.service import SETTINGS_ENV, Service, ServiceSettings


def check_port(host: str, port: int) -> None:
    """Fail with one line when ``host:port`` cannot be listened on (in use, not an address of this machine)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            sock.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise RagdialError(
                    f"port {port} on {host} is already in use (another server?); stop it or pick another --port"
                ) from None
            raise RagdialError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None


def announce_when_healthy(url: str, timeout: float = 3600.0) -> threading.Thread:
    """Print the URL once ``/healthz`` answers ``ok`` (a daemon thread polling the server's own port)."""

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through an HTTP proxy

    def poll() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with direct.open(url + "healthz", timeout=2) as response:
                    if json.load(response).get("status") == "ok":
                        print(f"ragdial is ready: open {url}  (API {url}v1/chat/completions; Ctrl-C stops)", flush=True)
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)

    thread = threading.Thread(target=poll, name="ragdial-announce", daemon=True)
    thread.start()
    return thread


def serve(
    settings: ServiceSettings,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    log_level: str = "info",
    service: Service | None = None,
) -> None:
    """Run the service until interrupted."""
    import uvicorn

    from ragdial.serve.app import create_app

    check_port(host, port)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/"
    if workers <= 1:
        app = create_app(service or Service(settings))
        announce_when_healthy(url)
        uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
        return
    with tempfile.TemporaryDirectory(prefix="ragdial-run-") as run_dir:  # the workers' shared running turns
        os.environ[SETTINGS_ENV] = replace(settings, run_dir=settings.run_dir or run_dir).to_json()
        announce_when_healthy(url)
        uvicorn.run(
            "ragdial.serve.app:app_from_env",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            log_level=log_level,
            timeout_graceful_shutdown=5,
        )
