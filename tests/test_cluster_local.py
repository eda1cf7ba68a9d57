"""Local Dask clusters: started in the background, workers forked from a forkserver of
their own, preloading a build's job modules, and two clusters at once."""

from __future__ import annotations

import os
import socket
import sys
import time
import warnings
from multiprocessing import forkserver

import pytest

from nqkit.cluster import open_cluster
from nqkit.errors import InputError

FORKS = "forkserver" in __import__("multiprocessing").get_all_start_methods()


def _imported(name: str) -> bool:
    return name in sys.modules


def test_workers_import_what_is_preloaded_and_a_missing_module_is_left_to_the_job(
        ) -> None:
    with open_cluster("local", workers=1) as cluster:
        # asked while the cluster may still be starting: done once it has
        cluster.preload(["nqkit.no_such_module", "nqkit.text.lucene"])  # returns at once
        deadline = time.monotonic() + 120
        while not all(cluster.client.run(_imported, "nqkit.text.lucene").values()):
            assert time.monotonic() < deadline, "the worker never imported the module"
            time.sleep(0.1)
        assert cluster.map(len, [[1, 2]]) == [2]  # the workers still run jobs
    with open_cluster("none") as cluster:
        cluster.preload(["nqkit.no_such_module"])  # no workers: nothing to do


def test_two_local_clusters_at_once_start_without_a_warning() -> None:
    """Two commands on one machine (or two test workers) each start a cluster: neither
    may print Dask's "Port 8787 is already in use" on stderr. The port is held here,
    as a dashboard or another cluster would hold it."""
    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8787))
        held.listen()
    except OSError:  # already taken by something else: the case itself
        held.close()
        held = None  # type: ignore[assignment]
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with open_cluster("local", workers=1) as a, open_cluster("local", workers=1) as b:
                assert a.map(len, [[1]]) == [1] and b.map(len, [[1, 2]]) == [2]
        assert not [w for w in seen if "already in use" in str(w.message)]
    finally:
        if held is not None:
            held.close()


def _worker_facts() -> dict[str, object]:
    return {"pid": os.getpid(), "parent": os.getppid(), "probe": os.environ.get("NQKIT_PROBE"),
            "mmap": os.environ.get("MALLOC_MMAP_THRESHOLD_")}


@pytest.mark.skipif(not FORKS, reason="no forkserver on this platform")
def test_workers_are_forked_from_a_server_of_the_cluster_with_the_environment_of_its_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each cluster's workers come from a forkserver started for it (not this process,
    which spawned workers would have as their parent) and stopped with it, so a later
    cluster's workers see the environment of the later start: a variable changed or
    removed in between is changed or gone there too."""
    seen = []
    for value in ("one", "two", None):
        if value is None:
            monkeypatch.delenv("NQKIT_PROBE")
        else:
            monkeypatch.setenv("NQKIT_PROBE", value)
        with open_cluster("local", workers=2) as cluster:
            facts = cluster.map(lambda _: _worker_facts(), [0, 1])
            server = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]
        assert {f["parent"] for f in facts} == {server} and server != os.getpid()
        assert {f["mmap"] for f in facts} == {str(32 * 2**20)}  # Dask's pre-spawn settings
        seen.append({f["probe"] for f in facts})
    assert seen == [{"one"}, {"two"}, {None}]
    assert "MALLOC_MMAP_THRESHOLD_" not in os.environ  # undone here


def test_a_cluster_that_cannot_start_raises_at_its_first_use_and_leaves_nothing() -> None:
    for use in (lambda c: c.ready(), lambda c: c.map(len, [[1]])):
        with pytest.raises(ValueError, match="notasize"), \
                open_cluster("local", workers=1, memory_limit="not a size") as cluster:
            use(cluster)
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]
    with open_cluster("local", workers=1) as cluster:  # the next one starts
        assert cluster.map(len, [[1, 2]]) == [2]


def test_an_error_while_the_cluster_starts_is_the_one_raised() -> None:
    """The command's own error (bad input found while the cluster starts) is what the
    user sees; the cluster is still closed."""
    with pytest.raises(InputError, match="bad corpus"), open_cluster("local", workers=1):
        raise InputError("corpus.tsv", "bad corpus", "fix it")
    assert forkserver._forkserver._forkserver_pid is None  # type: ignore[attr-defined]


def test_a_preload_that_cannot_be_sent_is_dropped_without_a_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    """A preload asked while the cluster starts is sent from the starting thread when the
    start ends; if the command has closed the client meanwhile, nothing may surface
    (concurrent.futures would log the callback's exception with its traceback)."""
    from concurrent.futures import Future

    from nqkit.cluster import Cluster

    class Closed:
        def run(self, *args: object, **kw: object) -> None:
            raise RuntimeError("the client is closed")

    starting: Future[object] = Future()
    cluster = Cluster("local", workers=1, starting=starting)
    cluster.preload(["nqkit.text.lucene"])
    with caplog.at_level("DEBUG"):
        starting.set_result(Closed())
    assert not caplog.records
