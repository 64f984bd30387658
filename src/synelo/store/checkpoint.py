"""WAL checkpoints off the request path (SQLite).

By default SQLite checkpoints inside the COMMIT that pushes the WAL past 1,000 pages: that
round pays for copying the WAL into the database and for the fsyncs. The service turns that
off (``wal_autocheckpoint=0`` on its connections) and runs a PASSIVE checkpoint from this
thread instead; PASSIVE never blocks the writer or readers. Durability is unchanged: with
``synchronous=NORMAL`` in WAL mode checkpoints are the only syncs anyway.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import Engine, event

log = logging.getLogger("synelo.checkpoint")

THREAD_NAME = "synelo-wal-checkpoint"


class Checkpointer:
    """Checkpoints the WAL of a SQLite engine every `interval_s` seconds until stopped."""

    def __init__(self, engine: Engine, interval_s: float = 1.0) -> None:
        self.engine = engine
        self.interval_s = interval_s
        self._stop = threading.Event()
        event.listen(engine, "connect", _no_autocheckpoint)
        engine.dispose()  # connections opened before this get the setting too
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.checkpoint()
        self.checkpoint()

    def checkpoint(self) -> None:
        try:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception:  # a failed checkpoint is retried at the next tick
            log.exception("WAL checkpoint failed")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _no_autocheckpoint(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")
    dbapi_conn.execute("PRAGMA journal_size_limit=67108864")  # truncate the WAL to 64 MiB
