"""The one seam to Dask: run a list of independent shard jobs, here or on a cluster.

Index building, passage encoding and querying are split into jobs over passage ranges
(shards); each job reads its own shard files (memory-mapped where they are arrays) and
returns a small result. :func:`open_cluster` gives a :class:`Cluster` whose
:meth:`Cluster.map` runs ``fn(job)`` for every job and returns the results *in job
order*, whatever order they finished in, so a run on N workers produces exactly the
bytes of a run in one process.

``spec`` chooses where jobs run:

* ``"none"`` — in this process, one after another (no Dask needed);
* ``"local"`` — a ``distributed.LocalCluster`` of worker *processes* with one thread each
  (sized to the machine: one worker per core, or ``workers``), no dashboard; started for
  the command and stopped after it. It starts in the background while the command
  prepares its jobs (the first use of :attr:`Cluster.client` waits for it), and its
  workers are forked from one forkserver process that has imported Dask once, where the
  platform has forkservers (not Windows);
* ``"tcp://HOST:PORT"`` — an existing Dask scheduler. Its workers must import the same
  nqkit version and see the index directory at the same path (a shared file system).

Nothing else in nqkit imports Dask. An :class:`nqkit.errors.NqkitError` raised inside a
job is carried back and re-raised here as itself (one clear line at the CLI).

Long jobs (a shard of passages to encode takes minutes to hours on a CPU) count their work
with :func:`advance`; :meth:`Cluster.map` given the jobs' ``sizes`` shows one display of
the units done over all jobs, wherever they run: in this process the call updates it
directly, on a Dask worker it is an event (``Worker.log_event``) the client subscribes
to, so a log shows the encoding move even while one shard is the whole corpus.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import functools
import logging
import os
import resource
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from nqkit.errors import InputError, MissingDependencyError, NqkitError

__all__ = ["Cluster", "advance", "open_cluster", "peak_rss_mb", "validate_spec"]

J = TypeVar("J")
R = TypeVar("R")


def validate_spec(spec: str) -> str:
    """``none``, ``local`` or a scheduler address ``tcp://HOST:PORT`` (else InputError)."""
    if spec in ("none", "local"):
        return spec
    if spec.startswith(("tcp://", "tls://", "inproc://")) and ":" in spec.split("://", 1)[1]:
        return spec
    raise InputError(f"--cluster {spec}", "expected none, local or a scheduler address",
                     "give --cluster none, --cluster local or --cluster tcp://HOST:8786")


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (for job results and benchmarks)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def release_memory() -> None:
    """Give the memory this process has freed back to the system (glibc's
    ``malloc_trim``; elsewhere nothing): a job's freed arrays and objects otherwise stay
    in the process's heap, counted in its resident memory while later jobs run."""
    global _TRIM
    if _TRIM is None:
        _TRIM = False
        if sys.platform.startswith("linux"):
            import ctypes
            import ctypes.util

            # not glibc (musl has no malloc_trim): nothing to call
            with contextlib.suppress(OSError, AttributeError):
                _TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None  # glibc's malloc_trim, False where there is none


@dataclass(frozen=True, slots=True)
class _Failure:
    """A job's NqkitError, carried back by value (its class, and the message parts)."""

    kind: str
    where: str | None
    problem: str
    fix: str


_advance: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "nqkit_cluster_advance", default=None)


def advance(n: int) -> None:
    """Count ``n`` units of the running job's work as done (see the module docstring);
    nothing outside a job of :meth:`Cluster.map` given ``sizes``."""
    report = _advance.get()
    if report is not None:
        report(n)


def _call(fn: Callable[[Any], Any], job: Any,
          report: Callable[[int], None] | None = None) -> Any:
    token = _advance.set(report)
    try:
        return fn(job)
    except InputError as e:
        return _Failure("input", e.where, e.problem, e.fix)
    except NqkitError as e:
        return _Failure("other", None, str(e), "")
    finally:
        _advance.reset(token)


def _call_on_worker(fn: Callable[[Any], Any], job: Any, topic: str | None, i: int) -> Any:
    """:func:`_call` on a Dask worker: :func:`advance` becomes an event on ``topic``."""
    if topic is None:
        return _call(fn, job)
    from distributed import get_worker

    worker = get_worker()
    return _call(fn, job, lambda n: worker.log_event(topic, (i, n)))


class _Tally:
    """Units done per job, fed from any thread; a job's count is capped at its size and
    set to it when the job ends (so a late or lost event never counts twice or short)."""

    def __init__(self, sizes: Sequence[int]) -> None:
        self.sizes = list(sizes)
        self.done = [0] * len(sizes)
        self.ended = [False] * len(sizes)
        self.lock = threading.Lock()

    def add(self, i: int, n: int) -> None:
        with self.lock:
            if not self.ended[i]:
                self.done[i] = min(self.sizes[i], self.done[i] + n)

    def end(self, i: int) -> None:
        with self.lock:
            self.ended[i] = True
            self.done[i] = self.sizes[i]

    def total(self) -> int:
        with self.lock:
            return sum(self.done)

    def show(self, bar: Any, i: int | None = None, n: int = 0) -> None:
        """Add ``n`` units to job ``i`` (if given), then bring ``bar`` to the total."""
        if i is not None:
            self.add(i, n)
        bar.update(self.total() - bar.n)


async def _import_modules(modules: tuple[str, ...]) -> None:
    """:meth:`Cluster.preload` on a worker (a coroutine: Dask's ``run(wait=False)``
    takes only those; it runs in the worker's event loop, before any job)."""
    import importlib

    for name in modules:
        with contextlib.suppress(Exception):  # the job that needs it reports the error
            importlib.import_module(name)


def _preload(modules: tuple[str, ...], starting: concurrent.futures.Future[Any]) -> None:
    """:meth:`Cluster.preload` once a cluster has started (nothing if it failed to: the
    first use of its client raises that). It runs in the thread that started the
    cluster, maybe while the command closes a client it no longer needs: a preload that
    cannot be sent is dropped (the jobs import what they need), never a traceback from
    concurrent.futures on stderr."""
    if not starting.cancelled() and starting.exception() is None:
        with contextlib.suppress(Exception):
            starting.result().run(_import_modules, modules, wait=False)


def _raise_failure(f: _Failure) -> None:
    if f.kind == "input":
        raise InputError(f.where, f.problem, f.fix)
    raise NqkitError(f.problem)


def _probe(spec: str) -> None:
    """Refuse at once a tcp:// address where nothing listens.

    Dask retries a refused connection until its timeout (20 s here), which suits a
    scheduler that is still starting but makes a mistyped port a long silent wait: one
    plain connection attempt tells the two apart.
    """
    if not spec.startswith("tcp://"):
        return
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(spec)
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise InputError(f"--cluster {spec}", "expected a scheduler address tcp://HOST:PORT",
                         "give --cluster tcp://HOST:8786")
    try:
        socket.create_connection((host, port), timeout=5).close()
    except ConnectionRefusedError:
        raise InputError(f"--cluster {spec}", "no Dask scheduler listens there (connection "
                         "refused)", "start it with `dask scheduler` and workers with `dask "
                         f"worker {spec}`, or use --cluster local") from None
    except OSError:
        pass  # unreachable or slow: Dask's own timeout decides


class Cluster:
    """Where shard jobs run (see the module docstring); use :func:`open_cluster`."""

    def __init__(self, spec: str, client: Any = None, workers: int = 1, *,
                 starting: concurrent.futures.Future[Any] | None = None) -> None:
        self.spec = spec
        self._client = client
        self._starting = starting  # the client of a cluster still starting
        self.workers = workers

    @property
    def client(self) -> Any:
        """The Dask client (None: jobs run in this process); waits for a cluster that is
        still starting, and raises what stopped it from starting."""
        if self._starting is not None:
            self._client = self._starting.result()
            self._starting = None
        return self._client

    def ready(self) -> Cluster:
        """Wait for the cluster to have started (at once without one), so a step can be
        timed without the start; raises what stopped it from starting."""
        _ = self.client
        return self

    def preload(self, modules: Sequence[str]) -> None:
        """Start importing ``modules`` on every worker and return at once: a worker's
        first job otherwise waits for them (nothing without workers; an import that
        fails does so again in the job, with its message). On a cluster still starting
        the imports start as soon as it has."""
        if not modules:
            return
        if self._starting is not None:
            self._starting.add_done_callback(functools.partial(_preload, tuple(modules)))
        elif self.client is not None:
            self.client.run(_import_modules, tuple(modules), wait=False)

    def map(self, fn: Callable[[J], R], jobs: Sequence[J], *, desc: str = "jobs",
            sizes: Sequence[int] | None = None, unit: str = "shard") -> list[R]:
        """``[fn(job) for job in jobs]``, run where the cluster says; results in job order.

        Without ``sizes`` the display counts jobs; with them (each job's units of work,
        which the job counts with :func:`advance`) it counts ``unit`` over all jobs.
        """
        from nqkit.report import progress, progress_bar

        results: list[Any]
        if sizes is None:
            if self.client is None:
                results = [_call(fn, job) for job in progress(jobs, desc=desc, unit="shard")]
            else:
                results = self._run(fn, jobs, desc, None)
        else:
            if len(sizes) != len(jobs):
                raise ValueError("one size per job")
            tally = _Tally(sizes)
            with progress_bar(desc=desc, total=sum(sizes), unit=unit) as bar:
                if self.client is None:
                    results = []
                    for i, job in enumerate(jobs):
                        results.append(_call(fn, job, functools.partial(tally.show, bar, i)))
                        tally.end(i)
                        tally.show(bar)
                else:
                    results = self._run(fn, jobs, desc, (tally, bar))
        for r in results:
            if isinstance(r, _Failure):
                _raise_failure(r)
        return results

    def _run(self, fn: Callable[[Any], Any], jobs: Sequence[Any], desc: str,
             shown: tuple[_Tally, Any] | None) -> list[Any]:
        """The jobs on the Dask client; the display advanced by jobs ended (``shown``
        None) or by the units the jobs report, polled twice a second in this thread."""
        from distributed import as_completed, wait

        from nqkit.report import progress

        if shown is None:
            futures = self.client.map(_call_on_worker, [fn] * len(jobs), list(jobs),
                                      [None] * len(jobs), range(len(jobs)), pure=False)
            for _ in progress(as_completed(futures), desc=desc, total=len(futures),
                              unit="shard"):
                pass
            return list(self.client.gather(futures))
        tally, bar = shown
        topic = f"nqkit-progress-{uuid.uuid4().hex}"
        self.client.subscribe_topic(topic, lambda event: tally.add(*event[1]))
        try:
            futures = self.client.map(_call_on_worker, [fn] * len(jobs), list(jobs),
                                      [topic] * len(jobs), range(len(jobs)), pure=False)
            left = set(range(len(futures)))
            while left:
                with contextlib.suppress(TimeoutError):
                    wait([futures[i] for i in left], timeout=0.5)
                for i in [i for i in left if futures[i].done()]:
                    tally.end(i)
                    left.discard(i)
                tally.show(bar)
            return list(self.client.gather(futures))
        finally:
            self.client.unsubscribe_topic(topic)


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as e:
        raise MissingDependencyError("dask[distributed]", "cluster",
                                     "--cluster local or an address") from e
    return distributed


def _start_local(distributed: Any, n: int, memory_limit: str | None,
                 method: str | None) -> Any:
    """The client of a new LocalCluster of ``n`` one-thread worker processes, started
    by ``method`` (None: Dask's setting); closing the cluster (``client.cluster``) is
    the caller's."""
    import dask

    # Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, which also turns off
    # glibc's adaptive mmap threshold: every array over 128 KB becomes a fresh mapping,
    # and a BM25 search ran 2.4x slower than in one process (11.4 s against 4.7 s on
    # 200,000 passages). Memory is still returned to the system above 128 MB free.
    config: dict[str, Any] = {
        "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": 128 * 2**20,
        "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": 32 * 2**20}
    if method:
        config["distributed.worker.multiprocessing-method"] = method
    with dask.config.set(config):
        # no dashboard; the scheduler's own HTTP server (health, metrics) on a free port
        # of 127.0.0.1, not 8787: a second cluster (two commands at once) would find 8787
        # taken and warn on stderr
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            memory_limit=memory_limit, silence_logs=logging.ERROR)
    try:
        return distributed.Client(cluster)
    except BaseException:
        cluster.close()
        raise


# the clusters whose workers the forkserver forks, and the preload it had before
_FORKSERVER: dict[str, Any] = {"lock": threading.Lock(), "clusters": 0, "preload": None}


def _take_forkserver(distributed: Any) -> str | None:
    """``"forkserver"`` when a cluster's workers can be forked from a forkserver that
    this module starts and stops (:func:`_drop_forkserver` when the cluster closes),
    else None (Dask's setting: spawn).

    Why: a spawned worker imports Dask afresh (0.7-0.8 s of CPU here, two workers at
    once while the command writes its store) and takes 0.3 s longer to stop; the
    forkserver imports it once and forks every worker. Its preload is ``distributed``
    alone (Dask's would first import every optional package it knows of, pandas among
    them, here and in the server), and it stops with the last open cluster, so the next
    one's workers have the environment of its own start, as spawned workers do. Spawn
    where the platform has no forkserver (Windows), where the program runs one of its
    own, or where Dask or multiprocessing lack the switches used here."""
    import multiprocessing
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    utils = getattr(distributed, "utils", None)
    if ("forkserver" not in multiprocessing.get_all_start_methods()
            or not hasattr(utils, "_forkserver_preload_set")
            or not hasattr(server, "_stop")):
        return None
    with _FORKSERVER["lock"]:
        if _FORKSERVER["clusters"] == 0:
            if getattr(server, "_forkserver_pid", 0) is not None:
                return None  # running, and not started here
            _FORKSERVER["preload"] = getattr(server, "_preload_modules", None)
            server.set_forkserver_preload(["distributed"])  # type: ignore[union-attr]
            utils._forkserver_preload_set = True  # type: ignore[union-attr]
        _FORKSERVER["clusters"] += 1
    return "forkserver"


def _drop_forkserver() -> None:
    """A cluster of :func:`_take_forkserver` has closed: the last one stops the server
    and gives back the preload it had."""
    from multiprocessing import forkserver

    with _FORKSERVER["lock"]:
        _FORKSERVER["clusters"] -= 1
        if _FORKSERVER["clusters"] == 0:
            server = forkserver._forkserver
            server._stop()  # type: ignore[attr-defined]
            if _FORKSERVER["preload"] is not None:  # the program's own forkservers
                server.set_forkserver_preload(_FORKSERVER["preload"])


@contextlib.contextmanager
def open_cluster(spec: str = "none", *, workers: int | None = None,
                 memory_limit: str | None = "auto") -> Iterator[Cluster]:
    """A :class:`Cluster` for ``spec`` (``none``, ``local`` or an address), closed after use.

    ``workers`` sizes a local cluster (default: one per core, at least 1);
    ``memory_limit`` is Dask's per-worker limit (``"auto"``: the machine's memory divided
    by the workers), so a runaway job is stopped instead of the machine swapping.
    """
    spec = validate_spec(spec)
    if spec == "none":
        yield Cluster("none")
        return
    distributed = _import_distributed()
    # Dask logs every worker start and stop at INFO: diagnostics we do not want on stderr.
    for name in ("distributed", "distributed.scheduler", "distributed.nanny",
                 "distributed.worker", "distributed.core", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if spec == "local":
        n = workers or max(1, os.cpu_count() or 1)
        # Dask's nanny leaves its worker settings (OPENBLAS_NUM_THREADS=1, OMP_/MKL_NUM_
        # THREADS=1, PYTHONHASHSEED, the malloc thresholds) in this process's environment,
        # where every later subprocess inherits them: a one-thread OpenBLAS rounds a
        # chunked GEMM differently. They are undone when the cluster closes.
        saved = dict(os.environ)
        # started in the background, while the command reads its input and writes its
        # store; the client's first use waits for it
        method = _take_forkserver(distributed)
        try:
            pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nqkit-cluster")
            started = pool.submit(_start_local, distributed, n, memory_limit, method)
            pool.shutdown(wait=False)
            try:
                yield Cluster(spec, workers=n, starting=started)
            finally:
                if started.exception() is None:  # waits for the start; a failed one
                    ready = started.result()  # raised at the client's first use
                    cluster = ready.cluster
                    ready.close()
                    cluster.close()
        finally:
            if method:
                _drop_forkserver()
            for key in set(os.environ) - set(saved):
                del os.environ[key]
            os.environ.update(saved)
        return
    _probe(spec)
    try:
        client = distributed.Client(spec, timeout="20s")
    except OSError as e:
        raise InputError(f"--cluster {spec}", f"cannot reach the Dask scheduler ({e})",
                         "start it with `dask scheduler` and workers with `dask worker "
                         f"{spec}`, or use --cluster local") from None
    try:
        n = max(1, len(client.scheduler_info().get("workers", {})))
        yield Cluster(spec, client, n)
    finally:
        client.close()
