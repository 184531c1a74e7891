"""compress_page / decompress_page / compressed_sizes: round trips (hypothesis),
differential decoding with Python's zlib, cross-format equivalence of canned
IAA bodies and raw deflate, buffer types and typed errors."""

from __future__ import annotations

import array
import os
import threading
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cannery
from conftest import concat_bits, struct_page, text_page

MODES = ["canned", "fixed", "dynamic"]
LEVELS = ["fast", "default", "best"]
FORMATS = ["iaa", "deflate"]


def raw_inflate(data: bytes) -> bytes:
    return zlib.decompress(data, wbits=-15)


# Pages that compress: runs, small alphabets, repeated chunks, plus any bytes.
small_alphabet_pages = st.tuples(st.integers(1, 8), st.binary(max_size=4096)).map(
    lambda t: bytes((b % t[0]) * 37 % 256 for b in t[1])
)
repeated_pages = st.tuples(st.binary(min_size=1, max_size=64), st.integers(1, 4096)).map(
    lambda t: (t[0] * (t[1] // len(t[0]) + 1))[: t[1]]
)
pages = st.one_of(small_alphabet_pages, repeated_pages, st.binary(max_size=4096))


def compress_or_none(page, **kw):
    try:
        return cannery.compress_page(page, **kw)
    except cannery.IncompressibleError:
        return None


@given(page=pages, mode=st.sampled_from(MODES), level=st.sampled_from(LEVELS),
       fmt=st.sampled_from(FORMATS))
def test_round_trip_every_mode_level_format(kernel_table, page, mode, level, fmt):
    out = compress_or_none(page, table=kernel_table, mode=mode, level=level, format=fmt)
    if out is None:
        # A refusal is reported consistently, and per-page codes refuse only
        # pages that zlib cannot halve either.
        assert cannery.compressed_sizes([page], table=kernel_table, mode=mode, level=level,
                                        format=fmt).tolist() == [4096]
        if mode == "dynamic":
            assert len(zlib.compress(page, 9)) > 2048
        return
    assert len(out) < 4096
    assert cannery.decompress_page(out, table=kernel_table, mode=mode, format=fmt) == page


@given(page=pages, mode=st.sampled_from(MODES), level=st.sampled_from(LEVELS))
def test_standard_outputs_decode_with_zlib(kernel_table, page, mode, level):
    """fixed, dynamic and canned+deflate outputs are plain raw deflate."""
    out = compress_or_none(page, table=kernel_table, mode=mode, level=level, format="deflate")
    if out is not None:
        assert raw_inflate(out) == page


@given(page=pages, level=st.sampled_from(LEVELS))
def test_canned_body_with_header_prepended_decodes_with_zlib(kernel_table, page, level):
    body = compress_or_none(page, table=kernel_table, level=level, format="iaa")
    if body is None:
        return
    stream = concat_bits(kernel_table.header, kernel_table.header_bits, body)
    assert raw_inflate(stream) == page
    # And the "deflate" format is exactly that concatenation (up to the final
    # padding byte the IAA body's own padding may add).
    deflate = cannery.compress_page(page, table=kernel_table, level=level, format="deflate")
    assert int.from_bytes(deflate, "little") == int.from_bytes(stream, "little")
    assert len(stream) - len(deflate) in (0, 1)


def test_fixed_table_canned_equals_fixed_mode_bodies():
    """Canned with the RFC 1951 fixed table, deflate format, is a BTYPE=01 block."""
    fixed = cannery.Table.fixed()
    for seed in range(5):
        page = text_page(seed)
        out = cannery.compress_page(page, table=fixed, format="deflate")
        assert raw_inflate(out) == page
        assert out[0] & 0b111 == 0b011  # BFINAL=1, BTYPE=01


def test_modes_order_on_text_pages(kernel_table):
    """Dynamic codes per page beat the fixed code on skewed text; sizes are sane."""
    ps = [text_page(s) for s in range(8)]
    fixed = sum(cannery.compressed_sizes(ps, mode="fixed"))
    dynamic = sum(cannery.compressed_sizes(ps, mode="dynamic"))
    assert dynamic < fixed < 8 * 4096
    # zlib agrees the pages are compressible to roughly this extent.
    assert sum(len(zlib.compress(p, 6)) for p in ps) < fixed


@pytest.mark.parametrize("mode", MODES)
def test_compressed_sizes_through_the_batch_path_match_each_page(kernel_table, mode):
    """Many pages (more than one batch of 32, a random one among them) give
    the sizes of compressing each page alone, on one worker or several."""
    ps = [text_page(s) if s % 5 else struct_page(s) for s in range(70)]
    ps[33] = os.urandom(4096)
    alone = []
    for p in ps:
        out = compress_or_none(p, table=kernel_table, mode=mode)
        alone.append(4096 if out is None else len(out))
    for workers in (1, 2, 5):
        sizes = cannery.compressed_sizes(ps, table=kernel_table, mode=mode, workers=workers)
        assert sizes.dtype == np.int64
        assert sizes.tolist() == alone, workers
    assert alone[33] == 4096


@pytest.mark.parametrize("workers", [0, 33])
def test_compressed_sizes_refuses_a_worker_count_out_of_range(workers):
    with pytest.raises(cannery.InvalidInputError, match="workers"):
        cannery.compressed_sizes([text_page(1)], mode="fixed", workers=workers)


@pytest.mark.parametrize("mode", MODES)
def test_random_pages_are_incompressible(kernel_table, mode):
    page = os.urandom(4096)
    with pytest.raises(cannery.IncompressibleError) as e:
        cannery.compress_page(page, table=kernel_table, mode=mode)
    assert not isinstance(e.value, ValueError)
    assert isinstance(e.value, cannery.CanneryError)
    assert cannery.compressed_sizes([page], table=kernel_table, mode=mode).tolist() == [4096]


def test_empty_page_round_trips(kernel_table):
    for mode in MODES:
        for fmt in FORMATS:
            out = cannery.compress_page(b"", table=kernel_table, mode=mode, format=fmt)
            assert cannery.decompress_page(out, table=kernel_table, mode=mode, format=fmt) == b""
            if fmt == "deflate" or mode != "canned":
                assert raw_inflate(out) == b""


@pytest.mark.parametrize(
    "convert",
    [
        bytes,
        bytearray,
        memoryview,
        lambda b: np.frombuffer(b, dtype=np.uint8),
        lambda b: np.frombuffer(b, dtype=np.int8),
        lambda b: array.array("B", b),
        lambda b: memoryview(bytearray(b)),
    ],
    ids=["bytes", "bytearray", "memoryview", "numpy-uint8", "numpy-int8", "array", "mv-bytearray"],
)
def test_any_byte_buffer_is_a_page(kernel_table, convert):
    page = struct_page(1)
    expect = cannery.compress_page(page, table=kernel_table)
    got = cannery.compress_page(convert(page), table=kernel_table)
    assert got == expect
    assert cannery.decompress_page(convert(got), table=kernel_table) == page


def test_non_contiguous_numpy_page(kernel_table):
    wide = np.frombuffer(struct_page(2) * 2, dtype=np.uint8)
    view = wide[::2]
    assert not view.flags.c_contiguous
    out = cannery.compress_page(view, table=kernel_table)
    assert cannery.decompress_page(out, table=kernel_table) == view.tobytes()


def test_bad_buffers_raise_typed_errors(kernel_table):
    with pytest.raises(TypeError):
        cannery.compress_page("not bytes", table=kernel_table)  # type: ignore[arg-type]
    with pytest.raises(cannery.InvalidInputError, match="items of 4 bytes"):
        cannery.compress_page(np.zeros(1024, dtype=np.int32), table=kernel_table)
    with pytest.raises(cannery.InvalidInputError, match="one-dimensional"):
        cannery.compress_page(np.zeros((2, 2048), dtype=np.uint8), table=kernel_table)
    with pytest.raises(cannery.InvalidInputError, match="at most 4096"):
        cannery.compress_page(bytes(4097), table=kernel_table)


def test_bad_arguments_raise_invalid_input(kernel_table):
    page = text_page(3)
    for kw in (dict(mode="stored"), dict(level="max"), dict(format="zlib")):
        with pytest.raises(cannery.InvalidInputError) as e:
            cannery.compress_page(page, table=kernel_table, **kw)
        assert isinstance(e.value, ValueError)
    with pytest.raises(cannery.InvalidInputError, match="needs a table"):
        cannery.compress_page(page)
    out = cannery.compress_page(page, table=kernel_table)
    with pytest.raises(cannery.InvalidInputError, match="needs the table"):
        cannery.decompress_page(out)


def test_table_that_cannot_code_every_symbol_is_refused(kernel_table):
    litlen = kernel_table.litlen_lengths
    litlen[200] = 0  # still decodable, but pages containing byte 200 could not be coded
    t = cannery.Table.from_lengths(litlen, kernel_table.dist_lengths)
    with pytest.raises(cannery.TableError, match="symbol 200"):
        cannery.compress_page(b"abc", table=t)


def test_malformed_streams_raise_decompress_error(kernel_table):
    page = text_page(4)
    out = cannery.compress_page(page, table=kernel_table)
    with pytest.raises(cannery.DecompressError) as e:
        cannery.decompress_page(out[: len(out) // 2], table=kernel_table)
    assert isinstance(e.value, ValueError)
    deflate = cannery.compress_page(page, mode="dynamic")
    with pytest.raises(cannery.DecompressError):
        cannery.decompress_page(deflate[:-3], mode="dynamic")
    with pytest.raises(cannery.DecompressError):
        cannery.decompress_page(b"\xff" * 64, mode="fixed")  # BTYPE=3
    # A valid raw deflate stream that inflates beyond a page is refused.
    big = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = big.compress(bytes(5000)) + big.flush()
    with pytest.raises(cannery.DecompressError, match="limit"):
        cannery.decompress_page(stream, mode="fixed")


@given(data=st.binary(max_size=600))
def test_garbage_never_crashes_the_decoders(kernel_table, data):
    for mode, fmt in (("canned", "iaa"), ("fixed", "deflate")):
        try:
            out = cannery.decompress_page(data, table=kernel_table, mode=mode, format=fmt)
        except cannery.DecompressError:
            continue
        assert len(out) <= 4096
        if mode == "fixed":
            # Whatever we accept as raw deflate, zlib decodes identically.
            d = zlib.decompressobj(-15)
            assert d.decompress(data) == out


def test_compressed_sizes_matches_compress_page(kernel_table):
    ps = [text_page(5), struct_page(5), os.urandom(4096), bytes(4096)]
    sizes = cannery.compressed_sizes(ps, table=kernel_table)
    # One int64 per page, a NumPy array ready for analysis.
    assert isinstance(sizes, np.ndarray) and sizes.dtype == np.int64 and sizes.shape == (4,)
    sizes[0] += 0  # writable
    for p, n in zip(ps, sizes):
        out = compress_or_none(p, table=kernel_table)
        assert n == (4096 if out is None else len(out))


def test_compressed_sizes_accepts_arrays_and_page_files(kernel_table):
    ps = [text_page(6), struct_page(6), text_page(7)]
    expect = cannery.compressed_sizes(ps, table=kernel_table).tolist()
    arr = np.frombuffer(b"".join(ps), dtype=np.uint8).reshape(3, 4096)
    assert cannery.compressed_sizes(arr, table=kernel_table).tolist() == expect
    assert cannery.compressed_sizes(b"".join(ps), table=kernel_table).tolist() == expect
    assert cannery.compressed_sizes(iter(ps), table=kernel_table).tolist() == expect
    assert cannery.compressed_sizes([], table=kernel_table).tolist() == []
    with pytest.raises(cannery.InvalidInputError, match="whole 4096-byte pages"):
        cannery.compressed_sizes(b"x" * 5000, table=kernel_table)
    for n in (1, 100, 4095, 4097):
        with pytest.raises(cannery.InvalidInputError, match="exactly 4096"):
            cannery.compressed_sizes([text_page(6), b"x" * n], table=kernel_table)
    with pytest.raises(cannery.InvalidInputError, match="longer than"):
        cannery.compressed_sizes(np.zeros((2, 5000), dtype=np.uint8), table=kernel_table)
    with pytest.raises(cannery.InvalidInputError, match="shorter than"):
        cannery.compressed_sizes(np.zeros((2, 100), dtype=np.uint8), table=kernel_table)


def test_threads_share_tables_safely(kernel_table):
    ps = [text_page(s) for s in range(16)]
    expect = [cannery.compress_page(p, table=kernel_table) for p in ps]
    results: dict[int, list[bytes]] = {}

    def work(k: int) -> None:
        results[k] = [cannery.compress_page(p, table=kernel_table) for p in ps]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expect for r in results.values())


def in_new_thread(fn, *args, **kw):
    """fn(*args, **kw) on a thread of its own: it starts with no encoder or
    decoder kept from an earlier call."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args, **kw)))
    t.start()
    t.join()
    return out[0]


def test_calls_with_changing_arguments_match_first_calls(kernel_table):
    # Each thread keeps its last encoder and decoder: calls whose arguments
    # change from one to the next must give what a first call gives.
    other = cannery.Table.fixed()
    assert other != kernel_table
    ps = [text_page(s) for s in range(3)] + [struct_page(s) for s in range(3)]
    calls = []
    for i, p in enumerate(ps * 3):
        table = (kernel_table, other)[i % 2]
        mode = MODES[i % 3]
        kw = dict(table=table, mode=mode, level=LEVELS[(i // 2) % 3], format=FORMATS[(i // 3) % 2])
        calls.append((p, kw))
        calls.append((p, kw))  # the same arguments again: the kept encoder
    for p, kw in calls:
        got = cannery.compress_page(p, **kw)
        assert got == in_new_thread(cannery.compress_page, p, **kw), kw
        dkw = {k: kw[k] for k in ("table", "mode", "format")}
        back = cannery.decompress_page(got, **dkw)
        assert back == p
        assert back == in_new_thread(cannery.decompress_page, got, **dkw)
    # A stream made with one table does not decode as the other's after the
    # decoder was kept for the first.
    s = cannery.compress_page(ps[0], table=kernel_table)
    assert cannery.decompress_page(s, table=kernel_table) == ps[0]
    try:
        wrong = cannery.decompress_page(s, table=other)
    except cannery.DecompressError:
        wrong = None
    assert wrong != ps[0]
    assert wrong == in_new_thread(lambda: _or_none(cannery.decompress_page, s, table=other))


def _or_none(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except cannery.DecompressError:
        return None
