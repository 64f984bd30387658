"""The service in-process: synelo's app under uvicorn on loopback, in a thread, over SQLite in
a folder of its own; it can be stopped and started again on the same port (a restart)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Collection
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalService:
    """`start()`, `stop()`, `restart()`; `url` stays the same across restarts."""

    def __init__(
        self,
        folder: Path,
        admin_token: str,
        server_token: str,
        database_url: str | None = None,
        port: int | None = None,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.settings = Settings(
            data_dir=folder,
            admin_tokens=[admin_token],
            server_tokens=[server_token],
            database_url=database_url or f"sqlite:///{(folder / 'synelo.db').resolve()}",
            # no auto-tune by the clock: the simulator starts those due itself (`tune_due`),
            # by rounds, so that a run is the same every time
            autotune_check_s=0,
        )
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.restarts = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._store: Store | None = None
        self._app: FastAPI | None = None
        migrate(create_store_engine(self.settings.sqlalchemy_url, pool_size=1))

    def start(self) -> None:
        self._store = Store(
            create_store_engine(self.settings.sqlalchemy_url, pool_size=self.settings.db_pool_size),
            window_cache=self.settings.window_cache,
        )
        app = self._app = create_app(self.settings, store=self._store)
        # log_config=None: uvicorn must not reconfigure logging (dictConfig closes every
        # handler, e.g. the simulator's client log, on each restart).
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_config=None, access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="synelo")
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the in-process service did not start")
            time.sleep(0.01)

    def tune_due(self, only: Collection[str] | None = None) -> list[int]:
        """Start the auto-tunes and refits due now (of the pools in `only`, if given; the
        service's schedule, checked by rounds rather than every `autotune_check_s`) and wait
        for them to end; their job ids."""
        assert self._app is not None, "the service is not running"
        started: list[int] = self._app.state.autotune.check(only)
        if started:
            self._app.state.jobs.wait()
        return started

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(20)
        if self._store is not None:
            self._store.engine.dispose()
        self._server = self._thread = self._store = self._app = None

    def restart(self) -> None:
        self.stop()
        self.start()
        self.restarts += 1

    def __enter__(self) -> LocalService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
