"""cannery.Histogram: counts agree with the codec's own encoder (the exact
fast-parse size model), merging is a monoid in any order or partition,
settings mismatches are refused, and histograms pickle and serialize."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cannery
from conftest import struct_page, text_page

PAGES = [text_page(s) for s in range(20)] + [struct_page(s) for s in range(20)]


def canned_bits(h: cannery.Histogram, t: cannery.Table) -> int:
    return (
        sum(c * l for c, l in zip(h.litlen, t.litlen_lengths))
        + sum(c * l for c, l in zip(h.dist, t.dist_lengths))
        + h.extra_bits
    )


def test_counts_are_consistent():
    h = cannery.Histogram.from_pages(PAGES)
    assert h.pages == len(PAGES) and h.same_filled_pages == 0
    assert len(h.litlen) == 286 and len(h.dist) == 30
    assert h.litlen[256] == h.pages  # one end-of-block per page
    assert sum(h.litlen[257:]) == sum(h.dist)  # every match has a distance
    assert not any(h.dist[24:])  # a 4 KiB window never needs symbols 24..29
    assert h.parse == "fast" and h.window == 4096 and h.pricing_table is None


@pytest.mark.parametrize("table", [cannery.Table.kernel_2024(), cannery.Table.fixed()])
def test_histogram_predicts_canned_fast_size_exactly(table):
    for page in PAGES[:10] + PAGES[-10:]:
        h = cannery.Histogram.from_pages([page])
        expect = math.ceil(canned_bits(h, table) / 8)
        assert len(cannery.compress_page(page, table=table, level="fast")) == expect


def test_pages_of_other_sizes_are_refused():
    for n in (1, 100, 4095, 4097):
        with pytest.raises(cannery.InvalidInputError, match="exactly 4096"):
            cannery.Histogram.from_pages([PAGES[0], b"x" * n])


def test_same_filled_pages_are_counted_not_parsed():
    same = [bytes(4096), b"\xab" * 4096, bytes(range(8)) * 512]
    h = cannery.Histogram.from_pages(same + PAGES[:3])
    assert h.pages == 3 and h.same_filled_pages == 3


def test_inputs_all_give_the_same_histogram():
    a = cannery.Histogram.from_pages(PAGES)
    arr = np.frombuffer(b"".join(PAGES), dtype=np.uint8).reshape(len(PAGES), 4096)
    assert cannery.Histogram.from_pages(arr) == a
    assert cannery.Histogram.from_pages(b"".join(PAGES)) == a
    assert cannery.Histogram.from_pages(iter(PAGES)) == a
    assert cannery.Histogram.from_pages([bytearray(p) for p in PAGES]) == a


@given(st.lists(st.integers(0, len(PAGES)), min_size=0, max_size=6), st.randoms())
def test_merging_is_a_monoid_over_any_partition(cuts, rnd):
    order = list(PAGES)
    rnd.shuffle(order)
    bounds = sorted(set([0, len(order)] + cuts))
    parts = [cannery.Histogram.from_pages(order[a:b]) for a, b in zip(bounds, bounds[1:])]
    whole = cannery.Histogram.from_pages(PAGES)
    assert sum(parts) == whole  # sum() starts from 0: 0 + h is h
    rnd.shuffle(parts)
    total = cannery.Histogram()
    for p in parts:
        total = total + p
    assert total == whole
    assert cannery.Histogram() + whole == whole == whole.merge(cannery.Histogram())


def test_mismatched_settings_are_refused():
    fast = cannery.Histogram.from_pages(PAGES[:4])
    lazy = cannery.Histogram.from_pages(PAGES[:4], parse="default")
    with pytest.raises(cannery.HistogramError, match="parse") as e:
        fast + lazy
    assert isinstance(e.value, ValueError)
    best_fixed = cannery.Histogram.from_pages(PAGES[:4], parse="best")
    best_kernel = cannery.Histogram.from_pages(PAGES[:4], parse="best",
                                               pricing=cannery.Table.kernel_2024())
    assert best_kernel.pricing_table == cannery.Table.kernel_2024().id
    with pytest.raises(cannery.HistogramError, match="pricing"):
        best_fixed.merge(best_kernel)
    with pytest.raises(cannery.InvalidInputError, match="best"):
        cannery.Histogram.from_pages(PAGES[:4], pricing=cannery.Table.fixed())
    with pytest.raises(cannery.InvalidInputError, match="parse model"):
        cannery.Histogram(parse="greedy")
    # A library's parse needs the package built with that library.
    with pytest.raises(cannery.TrainError, match="`isal` feature"):
        cannery.Histogram.from_pages(PAGES[:4], parse="isal")
    with pytest.raises(TypeError):
        fast + 1  # type: ignore[operator]


def test_pickle_json_and_files(tmp_path):
    h = cannery.Histogram.from_pages(PAGES)
    assert pickle.loads(pickle.dumps(h)) == h
    doc = json.loads(h.to_json())
    assert doc["format"] == "cannery-histogram" and doc["pages"] == h.pages
    assert cannery.Histogram.from_json(h.to_json()) == h
    h.save(tmp_path / "h.json")
    assert cannery.Histogram.load(tmp_path / "h.json") == h
    assert repr(h) == f'Histogram(parse="fast", pages={h.pages}, same_filled_pages=0)'


def test_damaged_histograms_are_refused(tmp_path):
    doc = json.loads(cannery.Histogram.from_pages(PAGES).to_json())
    doc["litlen"][256] += 1  # an end-of-block without a page
    with pytest.raises(cannery.HistogramError, match="inconsistent"):
        cannery.Histogram.from_json(json.dumps(doc))
    with pytest.raises(cannery.HistogramError):
        cannery.Histogram.from_json("[]")
    (tmp_path / "bad.json").write_text('{"format": "cannery-table"}')
    with pytest.raises(cannery.HistogramError, match="bad.json"):
        cannery.Histogram.load(tmp_path / "bad.json")
