"""Cluster.preload: the workers import a build's job modules while the driver works."""

from __future__ import annotations

import sys
import time

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
