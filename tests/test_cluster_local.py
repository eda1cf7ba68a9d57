"""Local Dask clusters: preloading a build's job modules, and two clusters at once."""

from __future__ import annotations

import socket
import sys
import time
import warnings

from nqkit.cluster import open_cluster


def _imported(name: str) -> bool:
    return name in sys.modules


def test_workers_import_what_is_preloaded_and_a_missing_module_is_left_to_the_job(
        ) -> None:
    with open_cluster("local", workers=1) as cluster:
        assert cluster.client is not None
        assert not any(cluster.client.run(_imported, "nqkit.text.lucene").values())
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
