"""Start the HTTP service with uvicorn: in this process (one worker, the systems already built) or in several
worker processes that each build their own systems and share the SQLite session store."""

from __future__ import annotations

import os
from typing import Any

from fastapi import FastAPI

from ragdial.serve.service import SETTINGS_ENV, Service, ServiceSettings

ANNOUNCE_ENV = "RAGDIAL_ANNOUNCE_URL"


def announce_when_ready(app: FastAPI, url: str) -> None:
    """Print the URL once the server accepts connections."""

    def announce() -> None:
        print(f"ragdial is ready: open {url}  (API {url}v1/chat/completions; Ctrl-C stops)", flush=True)

    app.router.add_event_handler("startup", announce)


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

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/"
    options: dict[str, Any] = {"host": host, "port": port, "log_level": log_level, "timeout_graceful_shutdown": 5}
    if workers <= 1:
        app = create_app(service or Service(settings))
        announce_when_ready(app, url)
        uvicorn.run(app, **options)
        return
    os.environ[SETTINGS_ENV] = settings.to_json()
    os.environ[ANNOUNCE_ENV] = url
    uvicorn.run("ragdial.serve.app:app_from_env", factory=True, workers=workers, **options)
