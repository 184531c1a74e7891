"""cannery.Table: built-ins checked against RFC 1951 and the kernel's own
entries, validation against an independent Kraft-sum oracle, file forms,
pickling, equality and the implied header (decoded by zlib)."""

from __future__ import annotations

import hashlib
import json
import pickle
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cannery
from conftest import text_page


def kraft(lengths: list[int]) -> float:
    return sum(2.0 ** -l for l in lengths if l)


def test_fixed_table_is_rfc1951():
    t = cannery.Table.fixed()
    expect = [8] * 144 + [9] * 112 + [7] * 24 + [8] * 6
    assert t.litlen_lengths == expect
    assert t.dist_lengths == [5] * 30
    assert t.name == "fixed"
    assert cannery.Table.builtin("fixed") == t


def test_kernel_2024_table_properties(kernel_table):
    t = kernel_table
    assert len(t.litlen_lengths) == 286 and len(t.dist_lengths) == 30
    # Complete codes over every literal/length and the 24 distances of a 4 KiB window.
    assert kraft(t.litlen_lengths) == 1.0
    assert kraft(t.dist_lengths) == 1.0
    assert all(l > 0 for l in t.litlen_lengths)
    assert all(l > 0 for l in t.dist_lengths[:24]) and not any(t.dist_lengths[24:])
    assert t.kraft == (32768, 32768)
    assert t.iaa_compatible and t.iaa_violations() == [] and t.is_standard
    assert cannery.Table.builtin("kernel-2024") == t
    assert set(cannery.Table.BUILTIN_NAMES) == {"fixed", "kernel-2024"}


@pytest.mark.parametrize("table", [cannery.Table.fixed(), cannery.Table.kernel_2024()])
def test_id_is_sha256_of_the_lengths(table):
    digest = hashlib.sha256(bytes(table.litlen_lengths + table.dist_lengths)).hexdigest()
    assert table.id == digest[:16]


def test_header_is_a_standard_dynamic_header(kernel_table):
    t = kernel_table
    assert (t.header_bits + 7) // 8 == len(t.header)
    assert t.header[0] & 0b111 == 0b101  # BFINAL=1, BTYPE=10
    # The header plus the table's end-of-block code is a complete empty stream.
    empty = cannery.compress_page(b"", table=t, format="deflate")
    assert zlib.decompress(empty, wbits=-15) == b""
    assert int.from_bytes(empty, "little") & ((1 << t.header_bits) - 1) == int.from_bytes(
        t.header, "little"
    )


lengths_vectors = st.tuples(
    st.lists(st.integers(0, 15), min_size=286, max_size=286),
    st.lists(st.integers(0, 15), min_size=30, max_size=30),
)


@given(lengths_vectors)
def test_from_lengths_accepts_exactly_the_decodable_tables(vectors):
    ll, d = vectors
    ok = kraft(ll) <= 1.0 and kraft(d) <= 1.0 and ll[256] > 0
    if ok:
        t = cannery.Table.from_lengths(ll, d)
        assert t.litlen_lengths == ll and t.dist_lengths == d
    else:
        with pytest.raises(cannery.TableError):
            cannery.Table.from_lengths(ll, d)


def test_complete_random_tables_round_trip_pages():
    """Tables built from the lengths of a complete code work end to end."""
    base = cannery.Table.kernel_2024()
    # Swap code lengths between symbols: still complete, a different table.
    ll = base.litlen_lengths
    ll[ord("a")], ll[ord("z")] = ll[ord("z")], ll[ord("a")]
    t = cannery.Table.from_lengths(ll, base.dist_lengths, name="swapped")
    assert t != base and t.id != base.id and t.name == "swapped"
    page = text_page(11)
    out = cannery.compress_page(page, table=t)
    assert cannery.decompress_page(out, table=t) == page
    stream = cannery.compress_page(page, table=t, format="deflate")
    assert zlib.decompress(stream, wbits=-15) == page


def test_from_lengths_accepts_bytes_and_numpy(kernel_table):
    ll = np.array(kernel_table.litlen_lengths, dtype=np.uint8)
    t = cannery.Table.from_lengths(ll, bytes(kernel_table.dist_lengths))
    assert t == kernel_table


def test_invalid_lengths_raise_table_error(kernel_table):
    ll, d = kernel_table.litlen_lengths, kernel_table.dist_lengths
    cases = [
        (ll[:285], d, "285"),
        (ll, d + [0], "31"),
        (ll[:7] + [16] + ll[8:], d, "above the maximum"),
        (ll[:7] + [1] + ll[8:], d, "over-subscribed"),
        (ll[:256] + [0] + ll[257:], d, "end-of-block"),
        (ll[:3] + [-1] + ll[4:], d, "0..=15"),
        (ll[:3] + [300] + ll[4:], d, "0..=15"),
    ]
    for litlen, dist, message in cases:
        with pytest.raises(cannery.TableError, match=message) as e:
            cannery.Table.from_lengths(litlen, dist)
        assert isinstance(e.value, ValueError) and isinstance(e.value, cannery.InvalidInputError)
    with pytest.raises(TypeError):
        cannery.Table.from_lengths("abc", d)  # type: ignore[arg-type]
    with pytest.raises(cannery.InvalidInputError, match="no built-in table"):
        cannery.Table.builtin("zstd")


def test_incomplete_table_reports_iaa_violations(kernel_table):
    ll = kernel_table.litlen_lengths
    ll[285] = 0
    t = cannery.Table.from_lengths(ll, kernel_table.dist_lengths)
    assert not t.iaa_compatible and not t.is_standard
    v = t.iaa_violations()
    assert any("285" in m for m in v) and any("incomplete" in m for m in v)
    assert "rule(s) broken" in t.show()
    # Every symbol coded but the code incomplete: IAA format works, while a
    # standard inflater would reject the header, so "deflate" is refused.
    ll = kernel_table.litlen_lengths
    nine = ll.index(9)
    ll[nine] = 10
    t = cannery.Table.from_lengths(ll, kernel_table.dist_lengths)
    page = bytes(range(256)) * 16
    body = cannery.compress_page(page, table=t)
    assert cannery.decompress_page(body, table=t) == page
    with pytest.raises(cannery.TableError, match="not standard deflate"):
        cannery.compress_page(page, table=t, format="deflate")


@pytest.mark.parametrize("suffix,fmt", [(".json", None), (".bin", None), (".table", "binary"),
                                        (".bin", "json")])
def test_save_and_load(tmp_path, kernel_table, suffix, fmt):
    path = tmp_path / f"t{suffix}"
    kernel_table.save(path, format=fmt)
    raw = path.read_bytes()
    binary = fmt == "binary" or (fmt is None and suffix == ".bin")
    if binary:
        assert len(raw) == 332 and raw[:4] == b"CNTB"
        assert raw[16:] == bytes(kernel_table.litlen_lengths + kernel_table.dist_lengths)
    else:
        doc = json.loads(raw)
        assert doc["id"] == kernel_table.id and doc["name"] == "kernel-2024"
    back = cannery.Table.load(str(path))
    assert back == kernel_table
    assert cannery.Table.from_bytes(raw) == kernel_table
    assert cannery.Table.from_bytes(bytearray(raw)) == kernel_table


def test_json_keeps_name_and_provenance(kernel_table):
    back = cannery.Table.from_json(kernel_table.to_json())
    assert back.name == kernel_table.name
    assert back.provenance == kernel_table.provenance
    assert "2024" in back.provenance["source"]


def test_damaged_files_raise_table_error(tmp_path, kernel_table):
    raw = bytearray(kernel_table.to_binary())
    raw[40] ^= 1
    with pytest.raises(cannery.TableError):
        cannery.Table.from_bytes(raw)
    with pytest.raises(cannery.TableError, match="does not match"):
        cannery.Table.from_json(kernel_table.to_json().replace(kernel_table.id, "0" * 16))
    with pytest.raises(cannery.TableError, match="not a cannery table"):
        cannery.Table.from_bytes(b"hello")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(cannery.TableError, match="bad.json"):
        cannery.Table.load(bad)
    with pytest.raises(FileNotFoundError):
        cannery.Table.load(tmp_path / "missing.json")
    with pytest.raises(cannery.InvalidInputError, match="unknown table file format"):
        kernel_table.save(tmp_path / "x", format="yaml")  # type: ignore[arg-type]


def test_pickle_equality_hash_and_names(kernel_table):
    t = kernel_table.with_name("renamed")
    back = pickle.loads(pickle.dumps(t))
    assert back == t == kernel_table
    assert back.name == "renamed"
    assert hash(back) == hash(kernel_table)
    assert len({cannery.Table.fixed(), cannery.Table.kernel_2024(), t}) == 2
    assert repr(t) == f'Table(name="renamed", id="{t.id}")'
    assert t != cannery.Table.fixed()
    assert (t == "kernel") is False


def test_show_summarises_the_table(kernel_table):
    text = kernel_table.show()
    assert kernel_table.id in text
    assert f"{kernel_table.header_bits} bits" in text
    assert "IAA       ok" in text
    counts = {}
    for l in kernel_table.litlen_lengths:
        counts[l] = counts.get(l, 0) + 1
    profile = " ".join(f"{l}:{n}" for l, n in sorted(counts.items()))
    assert f"literal/length: {profile}" in text
    assert str(kernel_table) == text
