"""open_pages / open_corpus on the shipped fleet-snapshots corpus and on
files made here: every page comes back whole, as bytes or zero-copy NumPy
views; damaged files raise CorpusError."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import cannery
from conftest import CORPUS, struct_page, text_page

WORKLOADS = ["gcc-build", "jvm-index", "node-service", "python-etl", "redis", "sqlite-cache"]


@pytest.fixture(scope="module")
def corpus_files() -> dict[str, list[str]]:
    return cannery.open_corpus(CORPUS)


def test_open_corpus_lists_workloads(corpus_files):
    assert list(corpus_files) == WORKLOADS
    for name, files in corpus_files.items():
        assert files and all(os.path.isfile(f) for f in files)
        assert all(f.endswith(".cansnap") for f in files)
        assert all(os.path.basename(os.path.dirname(f)) == name for f in files)


def test_snapshot_pages_match_header_counts(corpus_files):
    pf = cannery.open_pages(corpus_files["redis"][0])
    header = pf.header
    assert header["finalized"] is True
    n = 0
    for page in pf:
        assert isinstance(page, bytes) and len(page) == 4096
        n += 1
    assert n == header["counts"]["stored"] == len(pf) > 100


def test_numpy_views_are_zero_copy_and_equal(corpus_files):
    path = corpus_files["python-etl"][0]
    as_bytes = [p for _, p in zip(range(50), cannery.open_pages(path))]
    as_arrays = [a for _, a in zip(range(50), cannery.open_pages(path, numpy=True))]
    for b, a in zip(as_bytes, as_arrays):
        assert a.dtype == np.uint8 and a.shape == (4096,)
        assert a.tobytes() == b
        assert isinstance(a.base, bytes) and not a.flags.writeable
    whole = cannery.open_pages(path).to_numpy()
    assert whole.shape == (len(cannery.open_pages(path)), 4096)
    assert whole[:50].tobytes() == b"".join(as_bytes)
    assert isinstance(whole.base, (bytes, np.ndarray))


def test_partial_iteration_then_read_all(corpus_files):
    pf = cannery.open_pages(corpus_files["jvm-index"][0])
    first = next(iter(pf))
    rest = pf.read_all()
    assert len(rest) == (len(pf) - 1) * 4096
    assert pf.read_all() == b""  # exhausted
    fresh = cannery.open_pages(corpus_files["jvm-index"][0]).to_numpy()
    assert fresh[0].tobytes() == first and fresh[1:].tobytes() == rest
    assert list(pf) == []


def test_raw_pages_file_round_trip(tmp_path):
    pages = [text_page(1), struct_page(2), bytes(4096), text_page(3)]
    path = tmp_path / "mine.pages"
    path.write_bytes(b"".join(pages))
    pf = cannery.open_pages(path)
    assert pf.header["meta"]["label"] == "mine" and pf.header["raw"] is True
    assert list(pf) == pages
    assert len(cannery.open_pages(path)) == 4
    assert cannery.open_corpus(path) == {"mine": [str(path)]}


def test_sizes_of_snapshot_pages(corpus_files, kernel_table):
    arr = cannery.open_pages(corpus_files["gcc-build"][0]).to_numpy()[:200]
    sizes = cannery.compressed_sizes(arr, table=kernel_table)
    assert len(sizes) == 200 and all(0 < s <= 4096 for s in sizes)
    # Spot-check against single-page calls on a few rows.
    for i in (0, 57, 199):
        try:
            n = len(cannery.compress_page(arr[i], table=kernel_table))
        except cannery.IncompressibleError:
            n = 4096
        assert sizes[i] == n


def test_damaged_files_raise_corpus_error(tmp_path, corpus_files):
    src = corpus_files["node-service"][0]
    data = Path(src).read_bytes()
    cut = tmp_path / "cut.cansnap"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(cannery.CorpusError) as e:
        list(cannery.open_pages(cut))
    assert isinstance(e.value, ValueError)
    flipped = tmp_path / "flip.cansnap"
    b = bytearray(data)
    b[60] ^= 0xFF  # inside the checksummed header
    flipped.write_bytes(bytes(b))
    with pytest.raises(cannery.CorpusError):
        list(cannery.open_pages(flipped))
    odd = tmp_path / "odd.pages"
    odd.write_bytes(b"x" * 5000)
    with pytest.raises(cannery.CorpusError, match="multiple of 4096"):
        cannery.open_pages(odd)
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(cannery.CorpusError):
        cannery.open_pages(other)
    with pytest.raises(FileNotFoundError):
        cannery.open_pages(tmp_path / "missing.cansnap")
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(cannery.CanneryError):
        cannery.open_corpus(empty_dir)


def test_copy_of_corpus_file_reads_the_same(tmp_path, corpus_files):
    src = corpus_files["redis"][0]
    dst = tmp_path / "redis" / "copy.cansnap"
    dst.parent.mkdir()
    shutil.copy(src, dst)
    assert cannery.open_pages(dst).read_all() == cannery.open_pages(src).read_all()
    assert list(cannery.open_corpus(tmp_path)) == ["redis"]
