"""Evaluation results as tables: ``evaluate`` and ``cross_evaluate`` call
the native evaluators (``cannery._native._evaluate`` / ``_cross_evaluate``,
which run the trainer crate's evaluation in Rust) and return a
``pandas.DataFrame``, or the plain list of row dicts when pandas is not
installed. Nothing is computed here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from cannery import _native
from cannery._native import Table

__all__ = ["cross_evaluate", "evaluate"]

def _frame(rows: list[dict[str, Any]]) -> Any:
    try:
        import pandas  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def evaluate(
    table: Table,
    corpus: Any,
    *,
    peers: bool = True,
    part: Literal["all", "test", "train"] = "all",
    test_fraction: float = 0.2,
    seed: int = 0,
    eval_pages: int | None = 1000,
    progress: Callable[[str, int, int], object] | None = None,
) -> Any:
    """Compression of ``corpus`` (a corpus path, or a dict of workload name
    to a path, paths or pages) with ``table`` and its competitors, as
    ``cannery eval`` measures it: one row per workload and mode with
    ``ratio`` (page bytes / compressed bytes, incompressible pages counted
    as 4096), ``effective_ratio`` (also counting the zero and same-filled
    pages zswap stores for free), ``incompressible_pages``, ``pages``,
    ``bytes_in`` and ``bytes_out``.

    Modes: ``canned-fast|default|best`` (``table`` at each level, really
    encoded, decoded and checked), ``canned:kernel-2024`` (unless ``table``
    is that table), ``fixed``, ``dynamic-fast``, ``dynamic-best`` and, with
    ``peers``, ``zstd-1``, ``zstd-3``, ``lz4``, ``libdeflate-1``,
    ``libdeflate-6``. ``part`` selects all pages, or the held-out ("test")
    or training pages of the split ``cannery.train`` uses with the same
    ``test_fraction`` and ``seed``. At most ``eval_pages`` pages of each
    workload are measured (a deterministic sample by page hash; with
    ``part="test"`` the same pages ``cannery.train`` evaluates); ``None``
    measures every page. ``progress``, if given, is called as
    ``progress(step, done, total)`` as each workload's evaluation begins.

    Returns a pandas DataFrame, or a list of dicts if pandas is absent.
    """
    rows = _native._evaluate(
        table, corpus, peers=peers, part=part, test_fraction=test_fraction, seed=seed,
        eval_pages=eval_pages, progress=progress,
    )
    return _frame(rows)


def cross_evaluate(
    tables: Mapping[str, Table],
    corpus: Any,
    *,
    part: Literal["all", "test", "train"] = "all",
    test_fraction: float = 0.2,
    seed: int = 0,
) -> Any:
    """Canned ratio (fast parse) of every table in ``tables`` on every
    workload of ``corpus``: one row per table and workload with the columns
    of ``evaluate`` plus ``table``. Feed it to ``cannery.plot.cross_matrix``.

    Returns a pandas DataFrame, or a list of dicts if pandas is absent.
    """
    rows = _native._cross_evaluate(
        dict(tables), corpus, part=part, test_fraction=test_fraction, seed=seed
    )
    return _frame(rows)
