"""nqkit's process pools: workers that end with their run, at once and without a word."""

from __future__ import annotations

import signal
import time

import pytest

from nqkit.workers import process_pool


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _handlers(_: int) -> tuple[object, object]:
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_workers_leave_ctrl_c_to_the_parent_and_die_on_sigterm():
    with process_pool(1) as pool:
        assert pool.submit(_handlers, 0).result() == (signal.SIG_DFL, signal.SIG_IGN)


def test_a_pool_left_by_an_exception_stops_its_running_tasks():
    # Without stopping them, leaving the block would wait the 30 s for both tasks and they
    # would end with their result; stopped, none ends with a result.
    with pytest.raises(RuntimeError), process_pool(2) as pool:
        futures = [pool.submit(_sleep, 30) for _ in range(2)]
        workers = list(pool._processes.values())
        raise RuntimeError
    assert workers and not any(p.is_alive() for p in workers)
    assert not any(f.done() and not f.cancelled() and f.exception() is None for f in futures)


def test_a_pool_left_normally_finishes_its_tasks():
    with process_pool(2) as pool:
        futures = [pool.submit(_sleep, 0.01 * i) for i in range(4)]
    assert [f.result() for f in futures] == [0.0, 0.01, 0.02, 0.03]


def test_a_worker_stopped_before_its_initializer_ends_without_a_word():
    # A pool's worker inherits the command's SIGTERM handler until its initializer runs;
    # stopped in that moment it must end as SIGTERM ends any process (no "Process
    # ForkProcess-1:" and a traceback on the command's stderr). The child here never
    # replaces the inherited handler. It is signalled only once it runs Python code: a
    # signal that arrives between fork() and Python's after-fork reset is dropped by the
    # interpreter (the reason nqkit.workers.stop_pool uses SIGKILL), which made the test
    # itself wait 60 s about once in a few hundred runs.
    import subprocess
    import sys
    import textwrap

    from conftest import this_tree_env

    script = textwrap.dedent("""
        import multiprocessing, os, signal, time
        from nqkit.cli import _sigterm_unwinds
        ctx = multiprocessing.get_context("fork")
        running = ctx.Event()
        def work():
            running.set()
            time.sleep(60)
        with _sigterm_unwinds():
            child = ctx.Process(target=work)
            child.start()
            assert running.wait(300)
            os.kill(child.pid, signal.SIGTERM)
            child.join()
            print(child.exitcode)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, env=this_tree_env())
    assert (out.returncode, out.stdout, out.stderr) == (0, f"{-signal.SIGTERM}\n", "")
