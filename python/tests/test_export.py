"""export_kernel_header / import_kernel_header: the C text carries the
table's own codes and header, reads back to the same table, and refuses
what the kernel could not use."""

from __future__ import annotations

import re

import pytest

import cannery


def c_array(text: str, name: str) -> list[int]:
    m = re.search(name + r"\[\w*\]\s*=\s*\{(.*?)\}", text, re.S)
    assert m, name
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return [int(v, 0) for v in re.findall(r"0x[0-9a-fA-F]+|\b\d+\b", body)]


def canonical_codes(lengths: list[int]) -> list[int]:
    """RFC 1951 section 3.2.2, as a test oracle."""
    bl_count = [0] * 16
    for l in lengths:
        if l:
            bl_count[l] += 1
    code, next_code = 0, [0] * 16
    for bits in range(1, 16):
        code = (code + bl_count[bits - 1]) << 1
        next_code[bits] = code
    out = []
    for l in lengths:
        out.append(next_code[l] if l else 0)
        if l:
            next_code[l] += 1
    return out


@pytest.mark.parametrize("api", ["header-table", "mainline", "builtin"])
def test_kernel_header_round_trips(tmp_path, kernel_table, api):
    path = tmp_path / "canned.h"
    text = cannery.export_kernel_header(kernel_table, name="fleet", api=api, path=path)
    assert path.read_text() == text
    assert kernel_table.id in text
    back = cannery.import_kernel_header(text)
    assert back == kernel_table


def test_kernel_header_entries_are_length_and_code(kernel_table):
    text = cannery.export_kernel_header(kernel_table, name="fleet")
    ll = c_array(text, "fleet_ll_iaa") if "fleet_ll_iaa" in text else c_array(text, "fleet_ll_sym")
    assert len(ll) == 286
    assert [v >> 15 for v in ll] == kernel_table.litlen_lengths
    assert [v & 0x7FFF for v in ll] == canonical_codes(kernel_table.litlen_lengths)
    d = c_array(text, "fleet_d_iaa") if "fleet_d_iaa" in text else c_array(text, "fleet_d_sym")
    assert [v >> 15 for v in d] == kernel_table.dist_lengths
    # The header bytes in the C text are the table's own implied header.
    assert str(kernel_table.header_bits) in text


def test_export_refuses_bad_names_and_non_iaa_tables(kernel_table):
    with pytest.raises(cannery.InvalidInputError, match="C identifier"):
        cannery.export_kernel_header(kernel_table, name="9lives")
    with pytest.raises(cannery.InvalidInputError, match="unknown api"):
        cannery.export_kernel_header(kernel_table, name="x", api="v2")  # type: ignore[arg-type]
    ll = kernel_table.litlen_lengths
    ll[285] = 0
    t = cannery.Table.from_lengths(ll, kernel_table.dist_lengths)
    with pytest.raises(cannery.ExportError, match="IAA"):
        cannery.export_kernel_header(t, name="broken")


def test_import_rejects_text_that_is_no_header():
    with pytest.raises(cannery.TableError):
        cannery.import_kernel_header("int main(void) { return 0; }")
