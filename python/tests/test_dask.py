"""cannery.dask: histograms of snapshot files built on a 2-worker
distributed.LocalCluster (separate processes), summed in a tree, give a
table byte-identical to the single-process result; only paths and
histograms cross process boundaries."""

from __future__ import annotations

import pickle
import time

import pytest

import cannery
from conftest import CORPUS

distributed = pytest.importorskip("distributed")
cannery_dask = pytest.importorskip("cannery.dask")


@pytest.fixture(scope="module")
def paths() -> list[str]:
    return [f for fs in cannery.open_corpus(CORPUS).values() for f in fs]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def test_dask_train_matches_single_process(paths, client, capsys):
    t0 = time.monotonic()
    single_hist = sum(cannery.Histogram.from_file(p) for p in paths)
    single = cannery.train_from_histogram(single_hist)
    t1 = time.monotonic()
    on_dask = cannery_dask.train(paths, client=client)
    t2 = time.monotonic()
    assert on_dask.to_binary() == single.to_binary()
    assert on_dask.to_json() == single.to_json()
    assert single_hist.pages > 10_000
    with capsys.disabled():
        print(f"\n[dask] {len(paths)} snapshot files, {single_hist.pages} pages: "
              f"single process {t1 - t0:.2f} s, 2-worker LocalCluster {t2 - t1:.2f} s")


def test_any_tree_shape_gives_the_same_histogram(paths, client):
    a = cannery_dask.histogram(paths, client=client, split_every=2)
    b = cannery_dask.histogram(list(reversed(paths)), client=client, split_every=8)
    assert a == b
    # What a worker sends back is a histogram, not pages.
    one = cannery_dask.histogram_of(paths[0])
    assert len(pickle.dumps(one)) < 40_000 < 4096 * one.pages


def test_parse_settings_travel_with_the_histograms(paths, client):
    h = cannery_dask.histogram(paths[:2], client=client, parse="default")
    assert h.parse == "default"
    with pytest.raises(cannery.InvalidInputError):
        cannery_dask.histogram([], client=client)
