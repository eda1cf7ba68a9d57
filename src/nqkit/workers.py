"""The worker processes of nqkit's own process pools: they end with their run, quietly.

A pool's workers are forked from the command's process and so inherit its signal
handling: SIGTERM raising :class:`nqkit.cli.Terminated`, Ctrl-C raising
``KeyboardInterrupt``. In a worker either would print a traceback of its own beside the
command's one-line message, and a worker whose parent was killed outright would keep a
core busy to the end of its shard. :func:`init_worker` (a pool ``initializer``) undoes
both: the parent handles Ctrl-C and stops its pool, SIGTERM ends a worker at once, and a
worker ends when its parent does. :func:`process_pool` gives such a pool, and stops its
workers at once (:func:`stop_pool`, by SIGKILL) when the block is left by an exception,
instead of waiting for tasks nobody will read.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["die_with_parent", "init_worker", "new_pool", "process_pool", "stop_pool"]


def new_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers end quietly with their run (see the module)."""
    return ProcessPoolExecutor(max_workers=workers, initializer=init_worker,
                               initargs=(os.getpid(),))


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's workers now, running tasks included, and shut it down."""
    # shutdown() alone waits for the running tasks; Python 3.14 has kill_workers() for
    # this, older versions only the private process table. SIGKILL, not SIGTERM: a
    # SIGTERM that reaches a worker between fork() and Python's after-fork reset is
    # dropped with the signals pending there, and that worker (here: blocked opening a
    # FIFO) kept shutdown() waiting forever; SIGKILL cannot be lost and prints nothing.
    kill = getattr(pool, "kill_workers", None)
    if kill is not None:
        kill()
    else:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.kill()
    pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """:func:`new_pool` for a block: shut down normally at its end, stopped at once when
    an exception (an error, Ctrl-C, SIGTERM) leaves it."""
    pool = new_pool(workers)
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def init_worker(parent_pid: int) -> None:
    """Pool initializer: default SIGTERM, Ctrl-C left to the parent, die with the parent."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent_pid)


def die_with_parent(parent_pid: int) -> None:
    """End this worker as soon as the process that started it dies (even by SIGKILL), so
    no worker keeps a core busy for minutes after its run was killed.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (the pool starts its workers from the main
    thread, whose end is the process's end); elsewhere a daemon thread polls the parent.
    """
    armed = False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        armed = libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        armed = False
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:  # pragma: no cover - not Linux
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="nqkit-parent-watch").start()
