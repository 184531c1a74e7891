"""Shared fixtures and helpers for the cannery Python tests.

Helpers here build test inputs (pages of known character) and bit-level
glue for differential checks; they implement no part of cannery itself.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[2]
"""Root of the repository (python/tests/ -> repo)."""

CORPUS = REPO / "corpora" / "fleet-snapshots"


def text_page(seed: int, size: int = 4096) -> bytes:
    """A compressible page: words from a small vocabulary, like heap text."""
    rng = random.Random(seed)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"page", b"zswap", b"\x00\x00\x00\x00", b"0123"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + bytes([rng.choice(b" ,;\n")])
    return bytes(out[:size])


def struct_page(seed: int, size: int = 4096) -> bytes:
    """A page of little-endian records with small integer fields and pointers."""
    rng = random.Random(seed)
    out = bytearray()
    base = rng.randrange(1 << 40) << 4
    while len(out) < size:
        out += rng.randrange(64).to_bytes(4, "little")
        out += (base + 16 * rng.randrange(256)).to_bytes(8, "little")
        out += bytes(4)
    return bytes(out[:size])


def concat_bits(first: bytes, first_bits: int, second: bytes) -> bytes:
    """The bit string ``first[:first_bits] || second`` (deflate's LSB-first order)."""
    head = int.from_bytes(first, "little") & ((1 << first_bits) - 1)
    value = head | (int.from_bytes(second, "little") << first_bits)
    nbits = first_bits + 8 * len(second)
    return value.to_bytes((nbits + 7) // 8, "little")


@pytest.fixture(scope="session")
def kernel_table():
    import cannery

    return cannery.Table.kernel_2024()
