"""A pool's re-rate run by the command line in its own process, its progress shown until
done (`synelo pool set`). Imported by the commands that need it, when they run.

The command runs the job itself rather than asking a running service to: it then works
whether the service runs or not, needs no token or address, and shows the job's progress
as the job makes it. The job is the service's own (`synelo.rerate.job.run_job`), and as safe
beside a running service as one the service starts in a process of its own: one job a pool
at a time (a second is refused), the new ratings written beside the old ones and swapped in
by one transaction, which the service's workers see. The job's row names this process, so
a job killed with it (SIGKILL, a power cut) is seen dead by the next re-rate at once.
Ctrl-C or SIGTERM stop it cleanly: the swap happened whole or not at all, and the job is
marked failed; its rows are swept by the pool's next re-rate. A visibility change given with
the re-rating one was made when the job started, and stays: the message says so.
"""

from __future__ import annotations

import gc
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from synelo.cli.app import err_console, fail
from synelo.domain import Job, JobRunning, Pool
from synelo.rerate.job import run_job
from synelo.store.generations import RerateStore
from synelo.store.repository import Store

INTERRUPTED = "interrupted: the command that ran it was stopped"


class ShownRerate(RerateStore):
    """A re-rate's reads and writes, its progress also shown (`display`)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._show: Callable[[str, int], None] = lambda phase, done: None

    def progress(self, job_id: int, phase: str, done: int) -> bool:
        running = super().progress(job_id, phase, done)
        self._show(phase, done)
        return running

    @contextmanager
    def display(self, job: Job) -> Iterator[None]:
        """A progress bar in a terminal; otherwise a line a step (a log, a pipe)."""
        where = f"re-rating pool {job.pool}"
        if not err_console.is_terminal:

            def line(phase: str, done: int) -> None:
                err_console.print(f"{where}: {phase}, {done:,} of {job.total:,} rounds")

            self._show = line
            yield
            return
        bar = Progress(
            "{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
        )
        task = bar.add_task(where, total=max(job.total, 1))

        def step(phase: str, done: int) -> None:
            bar.update(task, description=f"{where}: {phase}", completed=done)

        self._show = step
        with bar:
            yield


def rerate_here(
    store: Store,
    pool: Pool,
    spec: dict[str, object],
    who: str,
    started: Callable[[], object] = lambda: None,
) -> Pool:
    """Re-rate `pool` with the change `spec` (a patch job's) in this process, showing its
    progress; `started` runs once the job is started (not when one runs already). The pool
    as the swap left it; the command stops with exit status 1 if the job fails, 130 if it
    is interrupted."""
    rerate = ShownRerate(store)
    try:
        fresh, job = rerate.start(pool.name, "patch", spec, who)
    except JobRunning as exc:
        raise fail(
            f"a re-rate of pool {pool.name!r} is running (job {exc.job_id}): "
            "nothing was changed; try again once it is done"
        ) from None
    started()
    gc.disable()  # the job's millions of objects, as in the service's job processes
    with rerate.display(job), _terminate_as_interrupt():
        try:
            swapped = run_job(rerate, fresh, job)
        except KeyboardInterrupt:
            raise _interrupted(rerate, fresh, job) from None
    if swapped is None:
        ended = rerate.job(fresh, job.id)
        raise fail(f"the re-rate of pool {pool.name!r} failed: {ended and ended.error}")
    return swapped


def _interrupted(rerate: RerateStore, pool: Pool, job: Job) -> typer.Exit:
    """What an interrupted job left, said; the exit status 130 to raise."""
    rerate.fail(job, INTERRUPTED)  # unless its swap had committed: then it is done
    ended = rerate.job(pool, job.id)
    if ended is not None and ended.status == "done":
        err_console.print(
            f"[yellow]interrupted after the swap: pool {pool.name!r} has the change; "
            "its old rows are swept by its next re-rate[/]"
        )
    elif job.spec.get("public") is not None:  # set at once, when the job started
        shown = "public" if job.spec["public"] else "private"
        err_console.print(
            f"[yellow]interrupted: pool {pool.name!r} is {shown} now (set at once, when the "
            "job started), but keeps its ratings and its other settings as they were "
            f"(job {job.id} failed; its rows are swept by the pool's next re-rate)[/]"
        )
    else:
        err_console.print(
            f"[yellow]interrupted: pool {pool.name!r} keeps its ratings and settings as they "
            f"were (job {job.id} failed; its rows are swept by the pool's next re-rate)[/]"
        )
    return typer.Exit(130)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the job as Ctrl-C does, rather than end the process on the spot."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
